//! Scenario errors: one message that names the key path at fault; and why a
//! run gave no result.

use cclab_core::Cancelled;
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

/// Why a run gave no result: a problem with its scenario, or a request to stop.
/// They are kept apart because callers answer them differently (a scenario
/// error is reported and exits with status 2; a cancelled run is an interruption).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RunError {
    Scenario(ScenarioError),
    /// The run's [`cclab_core::CancelToken`] was cancelled before it finished.
    Cancelled(Cancelled),
}

impl From<ScenarioError> for RunError {
    fn from(e: ScenarioError) -> Self {
        RunError::Scenario(e)
    }
}

impl From<Cancelled> for RunError {
    fn from(c: Cancelled) -> Self {
        RunError::Cancelled(c)
    }
}

impl fmt::Display for RunError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RunError::Scenario(e) => e.fmt(f),
            RunError::Cancelled(c) => write!(f, "run {c}"),
        }
    }
}

impl std::error::Error for RunError {}

/// The candidate closest to `word`, if it is close enough to be a likely typo.
pub fn closest<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    candidates
        .into_iter()
        .map(|c| (strsim::normalized_damerau_levenshtein(&word.to_lowercase(), &c.to_lowercase()), c))
        .filter(|&(score, _)| score >= 0.5)
        // Ties go to the name listed first ("sackk" is as close to "sack1" as to "sack").
        .fold(None, |best: Option<(f64, &str)>, (score, c)| match best {
            Some((b, _)) if b >= score => best,
            _ => Some((score, c)),
        })
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
        assert_eq!(closest("sackk", ["tahoe", "reno", "newreno", "sack", "sack1"]), Some("sack"));
        assert_eq!(closest("zzzzzz", ["reno", "sack"]), None);
    }
}
