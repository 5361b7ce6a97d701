//! Typed views of a frame's columns (ints, floats, bools, strings, lists, groups) as the parser reads them.

use super::*;

/// A column as typed values, or the reason every row's value is the wrong
/// type. The values stay polars' own array (one chunk, its concrete type),
/// read row by row: copying a file's columns out would double its memory
/// during the load.
pub(super) enum Col<T: PolarsDataType> {
    Absent,
    Values(T::Array),
    /// Values, but for the rows listed (in order, with what they hold):
    /// unsigned integers past `i64::MAX`, each an error of its own row.
    Beyond(T::Array, Vec<(usize, u64)>),
    Wrong(String),
}

impl<T: PolarsDataType> Col<T> {
    /// One chunk, so that reading a row is one lookup in a typed array
    /// (not through the chunked array's dynamic chunks: a tenth of a
    /// Parquet load's CPU).
    fn of(ca: &ChunkedArray<T>) -> Col<T> {
        let ca = ca.rechunk();
        let array = ca.downcast_iter().next().cloned();
        array.map_or(Col::Absent, Col::Values)
    }

    pub(super) fn get(
        &self,
        i: usize,
        field: &str,
        want: &str,
    ) -> std::result::Result<Option<T::Physical<'_>>, RecordError> {
        match self {
            Col::Absent => Ok(None),
            Col::Values(v) => Ok(v.get(i)),
            Col::Beyond(v, rows) => match v.get(i) {
                Some(x) => Ok(Some(x)),
                None => match rows.binary_search_by_key(&i, |r| r.0) {
                    Ok(j) => Err(RecordError::impossible(
                        field,
                        format!("{} is too large", rows[j].1),
                    )),
                    Err(_) => Ok(None),
                },
            },
            Col::Wrong(dtype) => Err(RecordError::wrong_type(
                field,
                format!("expected {want}, the column is {dtype}"),
            )),
        }
    }

    /// [`Col::get`] for field `name` of step `k`: the field's path is
    /// written only when there is an error to report.
    pub(super) fn get_step(
        &self,
        i: usize,
        k: usize,
        name: &str,
        want: &str,
    ) -> std::result::Result<Option<T::Physical<'_>>, RecordError> {
        match self {
            Col::Wrong(_) | Col::Beyond(..) => self.get(i, &format!("steps[{k}].{name}"), want),
            _ => self.get(i, name, want),
        }
    }
}

pub(super) fn is_int(d: &DataType) -> bool {
    matches!(
        d,
        DataType::Int8
            | DataType::Int16
            | DataType::Int32
            | DataType::Int64
            | DataType::UInt8
            | DataType::UInt16
            | DataType::UInt32
            | DataType::UInt64
    )
}

pub(super) fn ints(s: Option<&Series>) -> Col<Int64Type> {
    match s {
        None => Col::Absent,
        Some(s) if s.dtype() == &DataType::Null => Col::Absent,
        Some(s) if is_int(s.dtype()) => match s.cast(&DataType::Int64) {
            Ok(c) => match c.i64() {
                // The cast leaves a u64 past i64::MAX null: such a row is
                // refused as too large, not read as absent.
                Ok(c) => match (Col::of(c), beyond_i64(s)) {
                    (Col::Values(v), rows) if !rows.is_empty() => Col::Beyond(v, rows),
                    (col, _) => col,
                },
                Err(_) => Col::of(&Int64Chunked::from_slice(PlSmallStr::EMPTY, &[])),
            },
            Err(e) => Col::Wrong(e.to_string()),
        },
        // pandas writes an integer column with missing values as floats:
        // whole numbers are taken as the integers they stand for.
        Some(s) if s.dtype().is_float() => {
            let Ok(c) = s.cast(&DataType::Float64) else {
                return Col::Wrong(s.dtype().to_string());
            };
            let Ok(c) = c.f64() else {
                return Col::Wrong(s.dtype().to_string());
            };
            let mut out = Vec::with_capacity(c.len());
            for (row, x) in c.iter().enumerate() {
                match x {
                    None => out.push(None),
                    Some(x) if x.fract() == 0.0 && x.abs() < 9.0e15 => out.push(Some(x as i64)),
                    Some(x) => {
                        return Col::Wrong(format!("{} and row {} holds {x}", s.dtype(), row + 1))
                    }
                }
            }
            Col::of(&Int64Chunked::from_iter_options(
                PlSmallStr::EMPTY,
                out.into_iter(),
            ))
        }
        Some(s) => Col::Wrong(s.dtype().to_string()),
    }
}

/// The rows of an unsigned 64-bit column holding more than `i64::MAX`,
/// with their values (none for any other type).
fn beyond_i64(s: &Series) -> Vec<(usize, u64)> {
    let Ok(c) = s.u64() else { return Vec::new() };
    c.iter()
        .enumerate()
        .filter_map(|(i, v)| v.filter(|&v| i64::try_from(v).is_err()).map(|v| (i, v)))
        .collect()
}

pub(super) fn floats(s: Option<&Series>) -> Col<Float64Type> {
    match s {
        None => Col::Absent,
        Some(s) if s.dtype() == &DataType::Null => Col::Absent,
        Some(s) if s.dtype().is_primitive_numeric() => match s.cast(&DataType::Float64) {
            Ok(c) => match c.f64() {
                Ok(c) => Col::of(c),
                Err(_) => Col::of(&Float64Chunked::from_slice(PlSmallStr::EMPTY, &[])),
            },
            Err(e) => Col::Wrong(e.to_string()),
        },
        Some(s) => Col::Wrong(s.dtype().to_string()),
    }
}

pub(super) fn bools(s: Option<&Series>) -> Col<BooleanType> {
    match s {
        None => Col::Absent,
        Some(s) if s.dtype() == &DataType::Null => Col::Absent,
        Some(s) => match s.bool() {
            Ok(c) => Col::of(c),
            Err(_) => Col::Wrong(s.dtype().to_string()),
        },
    }
}

pub(super) fn strs(s: Option<&Series>) -> Col<StringType> {
    match s {
        None => Col::Absent,
        Some(s) if s.dtype() == &DataType::Null => Col::Absent,
        Some(s) => match s.str() {
            Ok(c) => Col::of(c),
            Err(_) => Col::Wrong(s.dtype().to_string()),
        },
    }
}

/// String-like columns that are not plain strings (pandas categoricals are
/// written as dictionaries) become plain strings; others stay as they are.
pub(super) fn as_strings(s: Series) -> Series {
    if s.dtype().is_categorical() || s.dtype().is_enum() {
        s.cast(&DataType::String).unwrap_or(s)
    } else {
        s
    }
}

/// A group id column: strings as they are, integers as their decimal text.
pub(super) enum Groups {
    Ints(Col<Int64Type>),
    Strs(Col<StringType>),
}

impl Groups {
    pub(super) fn get(
        &self,
        i: usize,
        field: &str,
        want: &str,
    ) -> std::result::Result<Option<std::borrow::Cow<'_, str>>, RecordError> {
        use std::borrow::Cow;
        Ok(match self {
            Groups::Ints(c) => c.get(i, field, want)?.map(|x| Cow::Owned(x.to_string())),
            Groups::Strs(c) => c.get(i, field, want)?.map(Cow::Borrowed),
        })
    }
}

pub(super) fn groups(s: Option<&Series>) -> Groups {
    match s {
        Some(s) if is_int(s.dtype()) => match ints(Some(s)) {
            c @ (Col::Values(_) | Col::Beyond(..)) => Groups::Ints(c),
            _ => Groups::Ints(Col::Absent),
        },
        other => Groups::Strs(strs(other)),
    }
}

/// A list column: offsets into its flat inner values (after rechunking),
/// null rows marked.
pub(super) struct Lists {
    pub(super) offsets: Vec<i64>,
    pub(super) valid: Vec<bool>,
    pub(super) inner: Series,
}

pub(super) fn lists(s: Option<&Series>) -> std::result::Result<Option<Lists>, String> {
    let Some(s) = s else { return Ok(None) };
    if s.dtype() == &DataType::Null {
        return Ok(None);
    }
    let lc = s.list().map_err(|_| s.dtype().to_string())?.rechunk();
    let offsets = lc.offsets().map_err(|e| e.to_string())?.as_slice().to_vec();
    let valid = lc
        .is_not_null()
        .iter()
        .map(|v| v.unwrap_or(false))
        .collect();
    Ok(Some(Lists {
        offsets,
        valid,
        inner: lc.get_inner(),
    }))
}

/// A column's type as an error names it: a struct with its fields' names
/// (`list of struct{key, value}`: a map read back), else polars' own.
pub(super) fn type_name(d: &DataType) -> String {
    match d {
        DataType::List(inner) => format!("list of {}", type_name(inner)),
        DataType::Struct(fields) => format!(
            "struct{{{}}}",
            fields
                .iter()
                .map(|f| f.name().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
        d => d.to_string(),
    }
}

/// A list column of the structs a record's `steps` or a step's `logp`
/// holds (`fields` among theirs), or, when it is something else, its type
/// named: `Ok(None)` for no column or nothing but nulls.
pub(super) fn struct_lists(
    s: Option<&Series>,
    fields: &[&str],
) -> std::result::Result<Option<Lists>, String> {
    let named = || s.map_or(String::new(), |s| type_name(s.dtype()));
    let l = lists(s).map_err(|_| named())?;
    match &l {
        Some(x) => match x.inner.dtype() {
            DataType::Null => Ok(l),
            DataType::Struct(f) if fields.iter().all(|n| f.iter().any(|g| g.name() == *n)) => Ok(l),
            _ => Err(named()),
        },
        None => Ok(None),
    }
}

pub(super) fn field(s: &Series, name: &str) -> Option<Series> {
    s.struct_().ok().and_then(|sc| sc.field_by_name(name).ok())
}

/// The step columns, flat over every step of the file.
pub(super) struct StepCols<'a> {
    pub(super) turn: Col<Int64Type>,
    pub(super) output_tokens: Col<Int64Type>,
    pub(super) error: Col<BooleanType>,
    pub(super) reward: Col<Float64Type>,
    pub(super) budget_total: Col<Int64Type>,
    pub(super) budget_remaining: Col<Int64Type>,
    pub(super) logp: Option<(&'a Lists, Col<StringType>, Col<Float64Type>)>,
}
