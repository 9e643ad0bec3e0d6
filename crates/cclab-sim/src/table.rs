//! A run's tables as columns in Arrow's memory layout: a validity bitmap,
//! the values (8 bytes each, or one bit each for booleans) and, for strings,
//! 64-bit offsets into their UTF-8 bytes. This is the form in which the
//! tables cross to Python: pyarrow wraps the buffers as they are and polars
//! reads them without copying. A JSON document of 20 000 flows cost more to
//! encode and decode (1.1 s of CPU) than simulating them for 3 s.
//!
//! Every integer column is Int64, as polars reads an integer from JSON, so
//! that a table has the same types whichever way it was made.

use serde_json::Value as Json;

/// A column's Arrow type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Float64,
    Int64,
    Boolean,
    /// Arrow's `large_string`: 64-bit offsets.
    Utf8,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::Float64 => "f64",
            Kind::Int64 => "i64",
            Kind::Boolean => "bool",
            Kind::Utf8 => "str",
        }
    }
}

/// One column: `rows` values, Arrow's buffers.
#[derive(Clone, Debug, PartialEq)]
pub struct Column {
    pub name: String,
    pub kind: Kind,
    pub rows: usize,
    /// One bit per row, least significant bit first, set where the row has a
    /// value; `None` when every row has one.
    pub validity: Option<Vec<u8>>,
    /// Utf8 only: `rows + 1` offsets into `data`, native-endian i64.
    pub offsets: Option<Vec<u8>>,
    /// The values: native-endian f64 or i64, a bitmap for Boolean, UTF-8 bytes for Utf8.
    pub data: Vec<u8>,
}

/// A value a column can hold; `Option` of one is a nullable value.
pub trait Cell {
    const KIND: Kind;
    /// Appends the value (a placeholder for a null) and says whether it is one.
    fn append(self, column: &mut Builder) -> bool;
}

/// A column being filled: booleans are one byte each until `finish` packs them.
pub struct Builder {
    data: Vec<u8>,
    offsets: Vec<i64>,
    valid: Vec<bool>,
}

impl Builder {
    fn push_i64(&mut self, v: i64) {
        self.data.extend_from_slice(&v.to_ne_bytes());
    }
}

impl Cell for f64 {
    const KIND: Kind = Kind::Float64;
    fn append(self, b: &mut Builder) -> bool {
        b.data.extend_from_slice(&self.to_ne_bytes());
        true
    }
}

impl Cell for i64 {
    const KIND: Kind = Kind::Int64;
    fn append(self, b: &mut Builder) -> bool {
        b.push_i64(self);
        true
    }
}

impl Cell for u32 {
    const KIND: Kind = Kind::Int64;
    fn append(self, b: &mut Builder) -> bool {
        b.push_i64(i64::from(self));
        true
    }
}

impl Cell for u64 {
    const KIND: Kind = Kind::Int64;
    fn append(self, b: &mut Builder) -> bool {
        // Counts and sizes of one run stay far below 2^63.
        b.push_i64(i64::try_from(self).unwrap_or(i64::MAX));
        true
    }
}

impl Cell for bool {
    const KIND: Kind = Kind::Boolean;
    fn append(self, b: &mut Builder) -> bool {
        b.data.push(u8::from(self));
        true
    }
}

impl Cell for &str {
    const KIND: Kind = Kind::Utf8;
    fn append(self, b: &mut Builder) -> bool {
        b.data.extend_from_slice(self.as_bytes());
        b.offsets.push(b.data.len() as i64);
        true
    }
}

impl<T: Cell> Cell for Option<T> {
    const KIND: Kind = T::KIND;
    fn append(self, b: &mut Builder) -> bool {
        match self {
            Some(v) => v.append(b),
            None => {
                match T::KIND {
                    Kind::Float64 | Kind::Int64 => b.push_i64(0),
                    Kind::Boolean => b.data.push(0),
                    Kind::Utf8 => b.offsets.push(b.data.len() as i64),
                }
                false
            }
        }
    }
}

/// A column of a struct of `Vec`s reads its values by reference.
macro_rules! by_reference {
    ($($t:ty),*) => {$(
        impl Cell for &$t {
            const KIND: Kind = <$t as Cell>::KIND;
            fn append(self, b: &mut Builder) -> bool {
                (*self).append(b)
            }
        }
    )*};
}
by_reference!(f64, u32, u64, bool, Option<f64>, Option<u64>);

impl Cell for &String {
    const KIND: Kind = Kind::Utf8;
    fn append(self, b: &mut Builder) -> bool {
        self.as_str().append(b)
    }
}

/// Bits least significant first, as Arrow lays out validity and booleans.
fn bitmap(bits: impl ExactSizeIterator<Item = bool>) -> Vec<u8> {
    let mut out = vec![0u8; bits.len().div_ceil(8)];
    for (i, bit) in bits.enumerate() {
        out[i / 8] |= u8::from(bit) << (i % 8);
    }
    out
}

/// Named columns of equal length, in order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Table {
    pub rows: usize,
    pub columns: Vec<Column>,
}

impl Table {
    pub fn new(rows: usize) -> Self {
        Self { rows, columns: Vec::new() }
    }

    /// Adds a column of the values `values` yields; it must yield `rows` of them.
    pub fn column<C: Cell>(&mut self, name: &str, values: impl IntoIterator<Item = C>) -> &mut Self {
        let width = match C::KIND {
            Kind::Float64 | Kind::Int64 => 8,
            Kind::Boolean => 1,
            Kind::Utf8 => 16,
        };
        let mut b = Builder {
            data: Vec::with_capacity(self.rows * width),
            offsets: if C::KIND == Kind::Utf8 { Vec::with_capacity(self.rows + 1) } else { Vec::new() },
            valid: Vec::with_capacity(self.rows),
        };
        if C::KIND == Kind::Utf8 {
            b.offsets.push(0);
        }
        for v in values {
            let valid = v.append(&mut b);
            b.valid.push(valid);
        }
        assert_eq!(
            b.valid.len(),
            self.rows,
            "column {name}: {} values for {} rows",
            b.valid.len(),
            self.rows
        );
        let data = if C::KIND == Kind::Boolean { bitmap(b.data.iter().map(|&v| v != 0)) } else { b.data };
        let validity = b.valid.iter().any(|v| !v).then(|| bitmap(b.valid.iter().copied()));
        let offsets =
            (C::KIND == Kind::Utf8).then(|| b.offsets.iter().flat_map(|o| o.to_ne_bytes()).collect());
        self.columns.push(Column {
            name: name.to_string(),
            kind: C::KIND,
            rows: self.rows,
            validity,
            offsets,
            data,
        });
        self
    }

    /// Adds a column of JSON numbers (a protocol's counters): Int64 if every
    /// value is an integer, else Float64; null where a row has none.
    pub fn json_column<'a>(
        &mut self,
        name: &str,
        values: impl Iterator<Item = Option<&'a Json>> + Clone,
    ) -> &mut Self {
        let integers = values.clone().flatten().all(|v| v.is_null() || v.is_i64() || v.is_u64());
        if integers {
            self.column(name, values.map(|v| v.and_then(Json::as_u64)))
        } else {
            self.column(name, values.map(|v| v.and_then(Json::as_f64)))
        }
    }

    pub fn get(&self, name: &str) -> Option<&Column> {
        self.columns.iter().find(|c| c.name == name)
    }
}

impl Column {
    /// Whether row `i` has a value.
    pub fn is_valid(&self, i: usize) -> bool {
        self.validity.as_ref().is_none_or(|v| v[i / 8] >> (i % 8) & 1 == 1)
    }

    /// Row `i` of a Float64 or Int64 column, as a float (None for a null or another kind).
    pub fn number(&self, i: usize) -> Option<f64> {
        let bytes: [u8; 8] = self.data.get(i * 8..i * 8 + 8)?.try_into().ok()?;
        match self.kind {
            _ if !self.is_valid(i) => None,
            Kind::Float64 => Some(f64::from_ne_bytes(bytes)),
            Kind::Int64 => Some(i64::from_ne_bytes(bytes) as f64),
            Kind::Boolean | Kind::Utf8 => None,
        }
    }

    /// Row `i` of a Utf8 column (None for a null or another kind).
    pub fn text(&self, i: usize) -> Option<&str> {
        let offsets = self.offsets.as_ref()?;
        let at = |k: usize| -> Option<usize> {
            Some(i64::from_ne_bytes(offsets.get(k * 8..k * 8 + 8)?.try_into().ok()?) as usize)
        };
        if !self.is_valid(i) {
            return None;
        }
        std::str::from_utf8(self.data.get(at(i)?..at(i + 1)?)?).ok()
    }

    /// Row `i` of a Boolean column.
    pub fn flag(&self, i: usize) -> Option<bool> {
        (self.kind == Kind::Boolean && self.is_valid(i)).then(|| self.data[i / 8] >> (i % 8) & 1 == 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_and_nulls_read_back_in_arrow_layout() {
        let mut t = Table::new(3);
        t.column("x", [1.5, 2.5, -0.25])
            .column("n", [Some(7u64), None, Some(9)])
            .column("s", ["a", "", "ccc"])
            .column("o", [None, Some("de"), None::<&str>])
            .column("b", [true, false, true]);
        let x = t.get("x").unwrap();
        assert_eq!((x.kind, x.validity.is_none(), x.number(2)), (Kind::Float64, true, Some(-0.25)));
        let n = t.get("n").unwrap();
        assert_eq!(n.kind, Kind::Int64);
        assert_eq!(n.validity.as_deref(), Some(&[0b101u8][..]));
        assert_eq!([n.number(0), n.number(1), n.number(2)], [Some(7.0), None, Some(9.0)]);
        assert_eq!(n.data.len(), 24, "a null still takes its slot");
        let s = t.get("s").unwrap();
        assert_eq!(s.data, b"accc");
        assert_eq!([s.text(0), s.text(1), s.text(2)], [Some("a"), Some(""), Some("ccc")]);
        let o = t.get("o").unwrap();
        assert_eq!([o.text(0), o.text(1), o.text(2)], [None, Some("de"), None]);
        assert_eq!(o.offsets.as_ref().unwrap().len(), 4 * 8);
        let b = t.get("b").unwrap();
        assert_eq!((b.data.as_slice(), b.flag(1)), (&[0b101u8][..], Some(false)));
    }

    #[test]
    fn json_counters_are_integers_unless_one_is_not() {
        let (one, half, null) = (Json::from(1u64), Json::from(0.5), Json::Null);
        let mut t = Table::new(3);
        t.json_column("count", [Some(&one), None, Some(&null)].into_iter())
            .json_column("mean", [Some(&one), Some(&half), None].into_iter());
        let count = t.get("count").unwrap();
        assert_eq!(
            (count.kind, count.number(0), count.number(1), count.number(2)),
            (Kind::Int64, Some(1.0), None, None)
        );
        let mean = t.get("mean").unwrap();
        assert_eq!((mean.kind, mean.number(1)), (Kind::Float64, Some(0.5)));
    }

    #[test]
    #[should_panic(expected = "2 values for 3 rows")]
    fn a_short_column_is_a_bug() {
        Table::new(3).column("x", [1.0, 2.0]);
    }
}
