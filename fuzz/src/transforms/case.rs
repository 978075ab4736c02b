//! What the `transforms` target runs: a fixture edited by the fuzzer ([`Edits`], built with
//! `arbitrary`), brought within the bounds the reconciler works under.
//!
//! # Guarantees
//! - The content holds at most [`MAX_REVEAL_KEYS`] keys and [`MAX_REVEAL_BYTES`] bytes of names
//!   and values, all UTF-8: what a reveal hands the reconciler. Bulk entries are cut to fit.
//! - No key name and no text of a step contains `~`, which [`MARKER`] does (and flattened
//!   `jsonExpand` names hold no lower-case letter, which it also does): no key name can contain
//!   the marker, so an error showing it shows a value. Values may hold anything.

use arbitrary::{Arbitrary, Unstructured};
use base64::{Engine as _, engine::general_purpose};
use ferrvault_operator::{
    api::{Transform, TransformType},
    ferrvault::{MAX_REVEAL_BYTES, MAX_REVEAL_KEYS},
    rules::SecretData,
};

use super::{MARKER, fixtures::fixture};

/// The fuzzer's edits of a fixture.
#[derive(Arbitrary, Debug)]
struct Edits {
    /// Entries added to the fixture's content.
    entries: Vec<Entry>,
    /// Changes to its pipeline, in order.
    steps: Vec<StepEdit>,
}

/// Content added to the fixture's.
#[derive(Arbitrary, Debug)]
enum Entry {
    /// One key.
    One { key: Text, value: Value },
    /// `count` keys `<stem><i>` of one value: bulk from a few bytes of input.
    Many { stem: Text, count: u16, value: Value },
}

/// A value: any text, planted text, JSON, base64 of another value, or bulk.
#[derive(Arbitrary, Debug)]
enum Value {
    Text(String),
    Secret {
        before: String,
        after: String,
    },
    Json(Json),
    Base64 {
        inner: Box<Value>,
        url_safe: bool,
        line: u8,
    },
    Repeat {
        unit: String,
        times: u16,
    },
}

/// A JSON document (rendered by `serde_json`).
#[derive(Arbitrary, Debug)]
enum Json {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Text(String),
    Secret,
    Array(Vec<Json>),
    Object(Vec<(String, Json)>),
    /// `count` members named `<name><i>`, each `leaf`.
    Wide {
        name: String,
        count: u16,
        leaf: Box<Json>,
    },
    /// `depth` objects `{"<name>": …}` around `inner`.
    Deep {
        name: String,
        depth: u8,
        inner: Box<Json>,
    },
}

/// A change to the pipeline (indices wrap around its length).
#[derive(Arbitrary, Debug)]
enum StepEdit {
    Push(Step),
    Insert(u8, Step),
    Replace(u8, Step),
    Remove(u8),
}

/// A transform step, any fields set or not.
#[derive(Arbitrary, Debug)]
struct Step {
    type_: StepType,
    value: Option<Text>,
    from: Option<Text>,
    to: Option<Text>,
    key: Option<Text>,
    keys: Vec<Text>,
}

#[derive(Arbitrary, Debug, Clone, Copy)]
enum StepType {
    Prefix,
    Suffix,
    Rename,
    Base64Decode,
    JsonExpand,
    Unknown,
}

/// A key name or a step's text: one of the content's keys, or any text (its `~` replaced).
#[derive(Arbitrary, Debug)]
enum Text {
    Key(u16),
    Literal(String),
    Long { unit: char, length: u16 },
}

/// Content and pipeline, within the reveal's bounds.
pub struct Case {
    /// The revealed content.
    pub data: SecretData,
    /// `spec.transforms` (its bounds are checked by the caller, as the reconciler does).
    pub steps: Vec<Transform>,
}

impl Case {
    /// The case of `data`: its first byte picks a fixture, the rest edits it (see [`Edits`]).
    pub fn from_bytes(data: &[u8]) -> Option<Case> {
        let (&pick, rest) = data.split_first()?;
        let start = fixture(pick);
        let edits = Edits::arbitrary_take_rest(Unstructured::new(rest)).ok()?;
        let mut content = Content::default();
        for (key, value) in start.data {
            content.add(key, value);
        }
        let keys: Vec<String> = content.data.keys().cloned().collect();
        for entry in &edits.entries {
            entry.add_to(&mut content, &keys);
        }
        let mut steps = start.steps;
        for edit in &edits.steps {
            edit.apply(&mut steps, &keys);
        }
        Some(Case {
            data: content.data,
            steps,
        })
    }
}

/// Content being built within the reveal's bounds.
#[derive(Default)]
struct Content {
    data: SecretData,
    bytes: usize,
}

impl Content {
    /// Adds `key` unless the content would go over a bound; whether it was added.
    fn add(&mut self, key: String, value: String) -> bool {
        let size = key.len() + value.len();
        let fits = self.data.len() < MAX_REVEAL_KEYS && self.bytes + size <= MAX_REVEAL_BYTES;
        if fits && !self.data.contains_key(&key) {
            self.bytes += size;
            self.data.insert(key, value.into_bytes());
        }
        fits
    }
}

impl Entry {
    fn add_to(&self, content: &mut Content, keys: &[String]) {
        match self {
            Entry::One { key, value } => {
                content.add(key.render(keys), value.render());
            }
            Entry::Many { stem, count, value } => {
                let (stem, value) = (stem.render(keys), value.render());
                for i in 0..usize::from(*count).min(MAX_REVEAL_KEYS) {
                    if !content.add(format!("{stem}{i}"), value.clone()) {
                        break;
                    }
                }
            }
        }
    }
}

impl Value {
    /// The value's text, at most about [`MAX_REVEAL_BYTES`] long whatever the input asks for
    /// (the harness bounds what it builds too).
    fn render(&self) -> String {
        match self {
            Value::Text(text) => text.clone(),
            Value::Secret { before, after } => format!("{before}{MARKER}{after}"),
            Value::Json(json) => {
                let mut budget = MAX_REVEAL_BYTES;
                json.render(0, &mut budget).to_string()
            }
            Value::Base64 {
                inner,
                url_safe,
                line,
            } => {
                let engine = if *url_safe {
                    &general_purpose::URL_SAFE
                } else {
                    &general_purpose::STANDARD
                };
                let encoded = engine.encode(inner.render());
                match usize::from(*line) {
                    0 => encoded,
                    width => encoded
                        .as_bytes()
                        .chunks(width)
                        .map(|line| String::from_utf8_lossy(line).into_owned())
                        .collect::<Vec<_>>()
                        .join("\r\n"),
                }
            }
            Value::Repeat { unit, times } => {
                unit.repeat(usize::from(*times).min(MAX_REVEAL_BYTES / unit.len().max(1)))
            }
        }
    }
}

impl Json {
    /// Deep enough to pass `jsonExpand`'s depth cap by a few levels, no deeper.
    const MAX_RENDERED_DEPTH: usize = 40;

    /// The document, within `budget` bytes of JSON text (about: what does not fit is `null`).
    fn render(&self, depth: usize, budget: &mut usize) -> serde_json::Value {
        use serde_json::Value as V;
        if depth > Self::MAX_RENDERED_DEPTH || !charge(budget, 8) {
            return V::Null;
        }
        match self {
            Json::Null => V::Null,
            Json::Bool(flag) => V::Bool(*flag),
            Json::Int(int) => V::from(*int),
            Json::Float(float) => V::from(*float),
            Json::Text(text) if charge(budget, text.len()) => V::String(text.clone()),
            Json::Secret => V::String(MARKER.to_owned()),
            Json::Array(items) => V::Array(items.iter().map(|item| item.render(depth + 1, budget)).collect()),
            Json::Object(members) => {
                let mut object = serde_json::Map::new();
                for (name, member) in members {
                    if charge(budget, name.len()) {
                        let member = member.render(depth + 1, budget);
                        object.insert(name.clone(), member);
                    }
                }
                V::Object(object)
            }
            Json::Wide { name, count, leaf } => {
                let before = *budget;
                let leaf = leaf.render(depth + 1, budget);
                let each = before - *budget + name.len() + 8;
                let count = usize::from(*count).min(*budget / each);
                *budget -= count * each;
                V::Object((0..count).map(|i| (format!("{name}{i}"), leaf.clone())).collect())
            }
            Json::Deep {
                name,
                depth: levels,
                inner,
            } => {
                let levels = usize::from(*levels)
                    .min(Self::MAX_RENDERED_DEPTH.saturating_sub(depth))
                    .min(*budget / (name.len() + 8));
                *budget -= levels * (name.len() + 8);
                (0..levels).fold(inner.render(depth + levels + 1, budget), |inner, _| {
                    V::Object([(name.clone(), inner)].into_iter().collect())
                })
            }
            Json::Text(_) => V::Null,
        }
    }
}

/// Takes `bytes` from `budget`; whether there were that many left.
fn charge(budget: &mut usize, bytes: usize) -> bool {
    match budget.checked_sub(bytes) {
        Some(left) => {
            *budget = left;
            true
        }
        None => false,
    }
}

impl StepEdit {
    fn apply(&self, steps: &mut Vec<Transform>, keys: &[String]) {
        let at = |index: &u8, len: usize| usize::from(*index) % len.max(1);
        match self {
            StepEdit::Push(step) => steps.push(step.render(keys)),
            StepEdit::Insert(index, step) => {
                let index = at(index, steps.len() + 1);
                steps.insert(index, step.render(keys));
            }
            StepEdit::Replace(index, step) if !steps.is_empty() => {
                let index = at(index, steps.len());
                steps[index] = step.render(keys);
            }
            StepEdit::Remove(index) if !steps.is_empty() => {
                let index = at(index, steps.len());
                steps.remove(index);
            }
            StepEdit::Replace(..) | StepEdit::Remove(_) => {}
        }
    }
}

impl Step {
    fn render(&self, keys: &[String]) -> Transform {
        let text = |field: &Option<Text>| field.as_ref().map(|text| text.render(keys));
        Transform {
            type_: match self.type_ {
                StepType::Prefix => TransformType::Prefix,
                StepType::Suffix => TransformType::Suffix,
                StepType::Rename => TransformType::Rename,
                StepType::Base64Decode => TransformType::Base64Decode,
                StepType::JsonExpand => TransformType::JsonExpand,
                StepType::Unknown => TransformType::Unknown,
            },
            value: text(&self.value),
            from: text(&self.from),
            to: text(&self.to),
            key: text(&self.key),
            keys: self.keys.iter().map(|key| key.render(keys)).collect(),
        }
    }
}

impl Text {
    /// The longest text rendered: past the CRD's 253 characters, so the bound is exercised.
    const MAX_LENGTH: usize = 300;

    fn render(&self, keys: &[String]) -> String {
        let text = match self {
            Text::Key(index) if !keys.is_empty() => keys[usize::from(*index) % keys.len()].clone(),
            Text::Key(index) => index.to_string(),
            Text::Literal(text) => text.clone(),
            Text::Long { unit, length } => unit
                .to_string()
                .repeat(usize::from(*length) % (Self::MAX_LENGTH + 1)),
        };
        text.replace('~', "-")
    }
}
