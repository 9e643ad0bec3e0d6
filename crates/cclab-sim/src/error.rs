//! Scenario errors: one message that names the key path at fault.

use std::fmt;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScenarioError {
    /// Key path such as `flows[0].recovery`; empty for file-level problems.
    pub path: String,
    pub message: String,
}

impl ScenarioError {
    pub fn at(path: impl Into<String>, message: impl Into<String>) -> Self {
        Self { path: path.into(), message: message.into() }
    }
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() {
            write!(f, "{}", self.message)
        } else {
            write!(f, "{}: {}", self.path, self.message)
        }
    }
}

impl std::error::Error for ScenarioError {}

/// The candidate closest to `word`, if it is close enough to be a likely typo.
pub fn closest<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    candidates
        .into_iter()
        .map(|c| (strsim::normalized_damerau_levenshtein(&word.to_lowercase(), &c.to_lowercase()), c))
        .filter(|&(score, _)| score >= 0.5)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, c)| c)
}

/// "; did you mean "x"?" or nothing.
pub fn suggestion<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> String {
    closest(word, candidates).map_or_else(String::new, |c| format!("; did you mean \"{c}\"?"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggests_the_closest_name() {
        assert_eq!(closest("hstpc", ["highspeed", "hstcp", "reno"]), Some("hstcp"));
        assert_eq!(closest("sackk", ["tahoe", "reno", "newreno", "sack"]), Some("sack"));
        assert_eq!(closest("zzzzzz", ["reno", "sack"]), None);
    }
}
