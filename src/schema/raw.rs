//! Borrowed serde structs for one JSON record, and the slow path that names
//! the offending field when the fast typed parse fails.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::Deserialize;
use serde_json::Value;

use crate::error::RecordError;

pub type Str<'a> = Cow<'a, str>;

/// The union of the fields of every record kind; unknown fields are ignored.
#[derive(Deserialize, Default, Debug)]
pub struct RawRecord<'a> {
    #[serde(borrow, default, deserialize_with = "opt_str")]
    pub kind: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "opt_str")]
    pub run: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "opt_str")]
    pub method: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "opt_str")]
    pub benchmark: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "opt_str")]
    pub task: Option<Str<'a>>,
    pub sample: Option<i64>,
    pub budget: Option<i64>,
    pub max_budget: Option<i64>,
    pub success: Option<bool>,
    pub turns: Option<i64>,
    pub success_turn: Option<i64>,
    pub reward: Option<f64>,
    pub min_turns: Option<i64>,
    pub train_step: Option<i64>,
    #[serde(borrow)]
    pub group: Option<GroupKey<'a>>,
    #[serde(borrow, default, deserialize_with = "opt_str")]
    pub termination: Option<Str<'a>>,
    /// `seed`: a string or an integer (`1` and `"1"` are the same seed).
    #[serde(borrow)]
    pub seed: Option<GroupKey<'a>>,
    #[serde(borrow, default, deserialize_with = "opt_str")]
    pub category: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "opt_steps")]
    pub steps: Option<Vec<RawStep<'a>>>,
    // probe
    #[serde(borrow, default, deserialize_with = "opt_str")]
    pub state: Option<Str<'a>>,
    #[serde(borrow, default, deserialize_with = "opt_str")]
    pub source: Option<Str<'a>>,
    pub turn: Option<i64>,
    pub error: Option<bool>,
    #[serde(borrow)]
    pub frozenlake: Option<RawFrozenLake<'a>>,
    #[serde(borrow)]
    pub candidates: Option<Vec<RawCandidate<'a>>>,
    // a record read from a summary: where it was first read
    #[serde(borrow, default, deserialize_with = "opt_str")]
    pub log_file: Option<Str<'a>>,
    pub log_line: Option<i64>,
}

#[derive(Deserialize, Debug, Default)]
pub struct RawStep<'a> {
    pub turn: Option<i64>,
    pub output_tokens: Option<i64>,
    #[serde(borrow)]
    pub logp: Option<LogpMap<'a>>,
    pub error: Option<bool>,
    pub reward: Option<f64>,
    pub budget_total: Option<i64>,
    pub budget_remaining: Option<i64>,
}

#[derive(Deserialize, Debug)]
pub struct RawFrozenLake<'a> {
    #[serde(borrow)]
    pub map: Option<Vec<Str<'a>>>,
    pub pos: Option<i64>,
    pub steps_left: Option<i64>,
    pub slippery: Option<bool>,
}

#[derive(Deserialize, Debug)]
pub struct RawCandidate<'a> {
    #[serde(borrow, default, deserialize_with = "opt_str")]
    pub run: Option<Str<'a>>,
    #[serde(borrow)]
    pub action: Option<ActionValue<'a>>,
    pub score: Option<f64>,
    pub corrects: Option<bool>,
    pub terminal_success: Option<bool>,
}

/// A string borrowed from the line when it has no escapes. serde's own
/// `Cow<str>` borrows only as a bare `#[serde(borrow)]` field, never inside
/// an `Option` or as a map key: each such string was a `String` allocated
/// and freed per record (issue 20).
pub struct CowStr<'a>(pub Str<'a>);

impl<'de: 'a, 'a> Deserialize<'de> for CowStr<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_str(StrVisitor { ints: false }).map(CowStr)
    }
}

/// A string, borrowed when it has no escapes; with `ints`, an integer too,
/// as its decimal text.
struct StrVisitor {
    ints: bool,
}

impl<'de> Visitor<'de> for StrVisitor {
    type Value = Str<'de>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(if self.ints {
            "a string or an integer"
        } else {
            "a string"
        })
    }
    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(Cow::Borrowed(v))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Cow::Owned(v.to_string()))
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
        Ok(Cow::Owned(v))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
        if self.ints {
            Ok(Cow::Owned(v.to_string()))
        } else {
            Err(E::invalid_type(de::Unexpected::Signed(v), &self))
        }
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
        if self.ints {
            Ok(Cow::Owned(v.to_string()))
        } else {
            Err(E::invalid_type(de::Unexpected::Unsigned(v), &self))
        }
    }
}

/// An optional [`CowStr`] field.
fn opt_str<'de: 'a, 'a, D: Deserializer<'de>>(d: D) -> Result<Option<Str<'a>>, D::Error> {
    Ok(Option::<CowStr<'a>>::deserialize(d)?.map(|s| s.0))
}

/// A record's `steps`, into one allocation for up to 16 (serde's own `Vec`
/// grows from nothing: three allocations and two copies for a dozen steps).
fn opt_steps<'de: 'a, 'a, D: Deserializer<'de>>(
    d: D,
) -> Result<Option<Vec<RawStep<'a>>>, D::Error> {
    struct Steps<'a>(Vec<RawStep<'a>>);
    impl<'de: 'a, 'a> Deserialize<'de> for Steps<'a> {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            struct V;
            impl<'de> Visitor<'de> for V {
                type Value = Steps<'de>;
                fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                    f.write_str("an array of steps")
                }
                fn visit_seq<A: de::SeqAccess<'de>>(
                    self,
                    mut a: A,
                ) -> Result<Self::Value, A::Error> {
                    let mut v = Vec::with_capacity(a.size_hint().unwrap_or(0).clamp(16, 4096));
                    while let Some(step) = a.next_element()? {
                        v.push(step);
                    }
                    Ok(Steps(v))
                }
            }
            d.deserialize_seq(V)
        }
    }
    Ok(Option::<Steps<'a>>::deserialize(d)?.map(|s| s.0))
}

/// `group` may be a string or an integer; `1` and `"1"` are the same group.
#[derive(Debug)]
pub struct GroupKey<'a>(pub Str<'a>);

impl<'de: 'a, 'a> Deserialize<'de> for GroupKey<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(StrVisitor { ints: true }).map(GroupKey)
    }
}

/// A candidate's `action`: free text, or a FrozenLake move number.
#[derive(Debug)]
pub enum ActionValue<'a> {
    Text(Str<'a>),
    Int(i64),
}

impl<'de: 'a, 'a> Deserialize<'de> for ActionValue<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = ActionValue<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string or an integer")
            }
            fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(ActionValue::Text(Cow::Borrowed(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(ActionValue::Text(Cow::Owned(v.to_string())))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
                Ok(ActionValue::Int(v))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
                Ok(ActionValue::Int(i64::try_from(v).unwrap_or(i64::MAX)))
            }
        }
        d.deserialize_any(V)
    }
}

/// `logp`: `{run: float}` kept in order without allocating a map; the first
/// two pairs (a step's usual runs) held in place, so the usual step costs no
/// allocation (one per step was most of the load's calls to malloc).
#[derive(Debug, Default)]
pub struct LogpMap<'a> {
    first: [(Str<'a>, f64); 2],
    len: usize,
    rest: Vec<(Str<'a>, f64)>,
}

impl<'a> LogpMap<'a> {
    pub fn push(&mut self, run: Str<'a>, x: f64) {
        match self.first.get_mut(self.len) {
            Some(slot) => *slot = (run, x),
            None => self.rest.push((run, x)),
        }
        self.len += 1;
    }
    pub fn len(&self) -> usize {
        self.len
    }
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    /// The pairs in the order they were written.
    pub fn iter(&self) -> impl Iterator<Item = &(Str<'a>, f64)> {
        self.first[..self.len.min(2)].iter().chain(&self.rest)
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for LogpMap<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = LogpMap<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an object of run: log-probability")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Self::Value, A::Error> {
                let mut v = LogpMap::default();
                while let Some(CowStr(k)) = m.next_key()? {
                    let x: f64 = m.next_value()?;
                    v.push(k, x);
                }
                Ok(v)
            }
        }
        d.deserialize_map(V)
    }
}

/// The JSON type a field must have.
#[derive(Clone, Copy)]
enum Ty {
    Str,
    Int,
    Num,
    Bool,
    StrOrInt,
    Array,
    Object,
}

impl Ty {
    fn fits(self, v: &Value) -> bool {
        match self {
            Ty::Str => v.is_string(),
            Ty::Int => v.is_i64(),
            Ty::Num => v.is_number(),
            Ty::Bool => v.is_boolean(),
            Ty::StrOrInt => v.is_string() || v.is_i64() || v.is_u64(),
            Ty::Array => v.is_array(),
            Ty::Object => v.is_object(),
        }
    }
    fn name(self) -> &'static str {
        match self {
            Ty::Str => "a string",
            Ty::Int => "an integer",
            Ty::Num => "a number",
            Ty::Bool => "true or false",
            Ty::StrOrInt => "a string or an integer",
            Ty::Array => "an array",
            Ty::Object => "an object",
        }
    }
}

const TOP: &[(&str, Ty)] = &[
    ("kind", Ty::Str),
    ("run", Ty::Str),
    ("method", Ty::Str),
    ("benchmark", Ty::Str),
    ("task", Ty::Str),
    ("sample", Ty::Int),
    ("budget", Ty::Int),
    ("max_budget", Ty::Int),
    ("success", Ty::Bool),
    ("turns", Ty::Int),
    ("success_turn", Ty::Int),
    ("reward", Ty::Num),
    ("min_turns", Ty::Int),
    ("train_step", Ty::Int),
    ("group", Ty::StrOrInt),
    ("termination", Ty::Str),
    ("seed", Ty::StrOrInt),
    ("category", Ty::Str),
    ("steps", Ty::Array),
    ("state", Ty::Str),
    ("source", Ty::Str),
    ("turn", Ty::Int),
    ("error", Ty::Bool),
    ("frozenlake", Ty::Object),
    ("candidates", Ty::Array),
    ("log_file", Ty::Str),
    ("log_line", Ty::Int),
];
const STEP: &[(&str, Ty)] = &[
    ("turn", Ty::Int),
    ("output_tokens", Ty::Int),
    ("logp", Ty::Object),
    ("error", Ty::Bool),
    ("reward", Ty::Num),
    ("budget_total", Ty::Int),
    ("budget_remaining", Ty::Int),
];
const FROZENLAKE: &[(&str, Ty)] = &[
    ("map", Ty::Array),
    ("pos", Ty::Int),
    ("steps_left", Ty::Int),
    ("slippery", Ty::Bool),
];
const CANDIDATE: &[(&str, Ty)] = &[
    ("run", Ty::Str),
    ("action", Ty::StrOrInt),
    ("score", Ty::Num),
    ("corrects", Ty::Bool),
    ("terminal_success", Ty::Bool),
];

fn describe(v: &Value) -> String {
    let s = v.to_string();
    if s.len() > 40 {
        format!(
            "{}…",
            &s[..s.char_indices().nth(40).map_or(s.len(), |(i, _)| i)]
        )
    } else {
        s
    }
}

/// A whole number past what 64 bits hold (serde_json keeps one up to
/// 2⁶⁴ − 1 as u64, a larger one as a float with no fraction).
fn beyond_i64(v: &Value) -> bool {
    v.is_u64()
        || v.as_f64()
            .is_some_and(|x| x.fract() == 0.0 && x.abs() >= 9.2e18)
}

fn check_fields(
    obj: &serde_json::Map<String, Value>,
    fields: &[(&str, Ty)],
    prefix: &str,
) -> Option<RecordError> {
    for (name, ty) in fields {
        if let Some(v) = obj.get(*name) {
            if !v.is_null() && !ty.fits(v) {
                let field = format!("{prefix}{name}");
                if matches!(ty, Ty::Int) && beyond_i64(v) {
                    // An integer all the same: its size is what is wrong.
                    let size = match v.as_f64().is_some_and(|x| x < 0.0) {
                        true => "too small",
                        false => "too large",
                    };
                    return Some(RecordError::impossible(
                        field,
                        format!("{} is {size}", describe(v)),
                    ));
                }
                return Some(RecordError::wrong_type(
                    field,
                    format!("expected {}, got {}", ty.name(), describe(v)),
                ));
            }
        }
    }
    None
}

fn check_array(
    obj: &serde_json::Map<String, Value>,
    name: &str,
    fields: &[(&str, Ty)],
) -> Option<RecordError> {
    let arr = obj.get(name)?.as_array()?;
    for (i, el) in arr.iter().enumerate() {
        let Some(o) = el.as_object() else {
            return Some(RecordError::wrong_type(
                format!("{name}[{i}]"),
                format!("expected an object, got {}", describe(el)),
            ));
        };
        if let Some(e) = check_fields(o, fields, &format!("{name}[{i}].")) {
            return Some(e);
        }
        if name == "steps" {
            if let Some(lp) = o.get("logp").and_then(Value::as_object) {
                for (run, x) in lp {
                    if !x.is_number() {
                        return Some(RecordError::wrong_type(
                            format!("steps[{i}].logp.{run}"),
                            format!("expected a number, got {}", describe(x)),
                        ));
                    }
                }
            }
        }
    }
    None
}

/// Names the field whose JSON type is wrong in a record that failed the
/// typed parse (the slow path, run only on bad records); `e` is that parse's
/// error, worded as it is when no type is wrong (a duplicate field).
pub fn diagnose_types(v: &Value, e: &serde_json::Error) -> RecordError {
    let Some(obj) = v.as_object() else {
        return RecordError::wrong_type("", format!("expected a JSON object, got {}", describe(v)));
    };
    if let Some(e) = check_fields(obj, TOP, "") {
        return e;
    }
    if let Some(e) = check_array(obj, "steps", STEP) {
        return e;
    }
    if let Some(e) = check_array(obj, "candidates", CANDIDATE) {
        return e;
    }
    if let Some(fl) = obj.get("frozenlake").and_then(Value::as_object) {
        if let Some(e) = check_fields(fl, FROZENLAKE, "frozenlake.") {
            return e;
        }
        if let Some(rows) = fl.get("map").and_then(Value::as_array) {
            if let Some((i, r)) = rows.iter().enumerate().find(|(_, r)| !r.is_string()) {
                return RecordError::wrong_type(
                    format!("frozenlake.map[{i}]"),
                    format!("expected a string, got {}", describe(r)),
                );
            }
        }
    }
    // serde_json's message ends in "at line 1 column N": the line is ours.
    let msg = e.to_string();
    let msg = msg.rfind(" at line ").map_or(msg.as_str(), |i| &msg[..i]);
    RecordError::wrong_type("", format!("{msg} (column {})", e.column()))
}
