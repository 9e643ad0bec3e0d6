//! A strict reader over a TOML table: every getter names its key, so unknown
//! keys can be reported (with the closest known key) and every type or unit
//! error carries the full key path.

use crate::error::{suggestion, ScenarioError};
use crate::units;
use cclab_wire::Time;
use toml::{Table, Value};

pub struct Section<'a> {
    path: String,
    table: &'a Table,
    known: Vec<&'static str>,
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::String(_) => "a string",
        Value::Integer(_) => "an integer",
        Value::Float(_) => "a number",
        Value::Boolean(_) => "a boolean",
        Value::Datetime(_) => "a date",
        Value::Array(_) => "an array",
        Value::Table(_) => "a table",
    }
}

impl<'a> Section<'a> {
    pub fn new(path: impl Into<String>, table: &'a Table) -> Self {
        Self { path: path.into(), table, known: Vec::new() }
    }

    /// A section with no keys at `path` (an absent optional table).
    pub fn empty(path: impl Into<String>) -> Section<'static> {
        static EMPTY: std::sync::OnceLock<Table> = std::sync::OnceLock::new();
        Section::new(path, EMPTY.get_or_init(Table::new))
    }

    /// Where this section is (`observe[0]`), for errors raised after [`Section::finish`].
    pub fn path(&self) -> &str {
        &self.path
    }

    pub fn key_path(&self, key: &str) -> String {
        if self.path.is_empty() {
            key.to_string()
        } else {
            format!("{}.{key}", self.path)
        }
    }

    pub fn error(&self, key: &str, message: impl Into<String>) -> ScenarioError {
        ScenarioError::at(self.key_path(key), message)
    }

    pub fn has(&mut self, key: &'static str) -> bool {
        self.known.push(key);
        self.table.contains_key(key)
    }

    pub fn get(&mut self, key: &'static str) -> Option<&'a Value> {
        self.known.push(key);
        self.table.get(key)
    }

    fn wrong_type(&self, key: &str, value: &Value, expected: &str) -> ScenarioError {
        self.error(key, format!("expected {expected}, found {}", type_name(value)))
    }

    pub fn string(&mut self, key: &'static str) -> Result<Option<&'a str>, ScenarioError> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.as_str())),
            Some(v) => Err(self.wrong_type(key, v, "a string")),
        }
    }

    pub fn required_string(&mut self, key: &'static str) -> Result<&'a str, ScenarioError> {
        self.string(key)?.ok_or_else(|| self.error(key, "is required"))
    }

    pub fn bool(&mut self, key: &'static str) -> Result<Option<bool>, ScenarioError> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::Boolean(b)) => Ok(Some(*b)),
            Some(v) => Err(self.wrong_type(key, v, "true or false")),
        }
    }

    /// A whole number in `[min, max]`.
    pub fn integer(&mut self, key: &'static str, min: i64, max: i64) -> Result<Option<i64>, ScenarioError> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::Integer(i)) if (min..=max).contains(i) => Ok(Some(*i)),
            Some(Value::Integer(i)) => Err(self.error(key, format!("{i} is out of range [{min}, {max}]"))),
            Some(v) => Err(self.wrong_type(key, v, "a whole number")),
        }
    }

    /// A number in `[min, max)` (integers accepted).
    pub fn number(&mut self, key: &'static str, min: f64, max: f64) -> Result<Option<f64>, ScenarioError> {
        let x = match self.get(key) {
            None => return Ok(None),
            Some(Value::Float(f)) => *f,
            Some(Value::Integer(i)) => *i as f64,
            Some(v) => return Err(self.wrong_type(key, v, "a number")),
        };
        if !(x >= min && x < max) {
            return Err(self.error(key, format!("{x} is out of range [{min}, {max})")));
        }
        Ok(Some(x))
    }

    /// A number in the closed range `[min, max]`.
    pub fn number_closed(
        &mut self,
        key: &'static str,
        min: f64,
        max: f64,
    ) -> Result<Option<f64>, ScenarioError> {
        let x = match self.get(key) {
            None => return Ok(None),
            Some(Value::Float(f)) => *f,
            Some(Value::Integer(i)) => *i as f64,
            Some(v) => return Err(self.wrong_type(key, v, "a number")),
        };
        if !(x >= min && x <= max) {
            return Err(self.error(key, format!("{x} is out of range [{min}, {max}]")));
        }
        Ok(Some(x))
    }

    /// A string parsed by `parse`; the integer 0 is accepted as zero for
    /// durations. `example` shows a bare number how to carry its unit.
    fn parsed<T>(
        &mut self,
        key: &'static str,
        parse: fn(&str) -> Result<T, String>,
        zero: Option<T>,
        example: &str,
    ) -> Result<Option<T>, ScenarioError> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::String(s)) => parse(s).map(Some).map_err(|m| self.error(key, m)),
            Some(Value::Integer(0)) if zero.is_some() => Ok(zero),
            Some(v @ (Value::Integer(_) | Value::Float(_))) => {
                Err(self.error(key, format!("{v} has no unit; write it as a string like {example}")))
            }
            Some(v) => Err(self.wrong_type(key, v, "a string with a unit")),
        }
    }

    pub fn duration(&mut self, key: &'static str) -> Result<Option<Time>, ScenarioError> {
        self.parsed(key, cclab_wire::units::duration, Some(0), "\"10ms\"")
    }

    /// A duration that must be strictly positive.
    pub fn positive_duration(&mut self, key: &'static str) -> Result<Option<Time>, ScenarioError> {
        match self.duration(key)? {
            Some(0) => Err(self.error(key, "must be greater than zero")),
            other => Ok(other),
        }
    }

    pub fn size(&mut self, key: &'static str) -> Result<Option<u64>, ScenarioError> {
        self.parsed(key, cclab_wire::units::size, None, "\"64KB\"")
    }

    pub fn rate(&mut self, key: &'static str) -> Result<Option<u64>, ScenarioError> {
        self.parsed(key, cclab_wire::units::rate, None, "\"100Mbps\"")
    }

    pub fn buffer(&mut self, key: &'static str) -> Result<Option<units::BufferSpec>, ScenarioError> {
        self.parsed(key, units::buffer, None, "\"100pkts\", \"64KB\" or \"1bdp\"")
    }

    /// A sub-table; also accepts an inline table.
    pub fn table(&mut self, key: &'static str) -> Result<Option<Section<'a>>, ScenarioError> {
        match self.get(key) {
            None => Ok(None),
            Some(Value::Table(t)) => Ok(Some(Section::new(self.key_path(key), t))),
            Some(v) => Err(self.wrong_type(key, v, "a table")),
        }
    }

    /// An array of tables (`[[key]]`).
    pub fn tables(&mut self, key: &'static str) -> Result<Vec<Section<'a>>, ScenarioError> {
        match self.get(key) {
            None => Ok(Vec::new()),
            Some(Value::Array(items)) => items
                .iter()
                .enumerate()
                .map(|(i, item)| match item {
                    Value::Table(t) => Ok(Section::new(format!("{}[{i}]", self.key_path(key)), t)),
                    v => Err(ScenarioError::at(
                        format!("{}[{i}]", self.key_path(key)),
                        format!("expected a table, found {}", type_name(v)),
                    )),
                })
                .collect(),
            Some(v) => Err(self.wrong_type(key, v, "an array of tables ([[...]])")),
        }
    }

    /// The keys and values of this table, for tables whose keys the caller checks
    /// itself (algorithm parameters); such a section needs no `finish`.
    pub fn entries(&self) -> impl Iterator<Item = (&'a String, &'a Value)> {
        self.table.iter()
    }

    /// Rejects any key no getter asked for, suggesting the closest known one.
    pub fn finish(self) -> Result<(), ScenarioError> {
        for key in self.table.keys() {
            if !self.known.iter().any(|k| k == key) {
                let hint = suggestion(key, self.known.iter().copied());
                return Err(self.error(key, format!("unknown key{hint}")));
            }
        }
        Ok(())
    }
}
