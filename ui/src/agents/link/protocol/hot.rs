//! The two frames every remote call brings, read without a JSON tree of the
//! whole frame: `batch/execute` and the agent's reply to `tool/invoke`
//! (its result read by a visitor that builds no map for `{"value": …}`).

use serde::Deserialize;
use serde_json::Value;

use super::params::ExecuteBatch;

/// The two frames every remote call brings, read without a JSON tree of the
/// whole frame: `batch/execute` (its params straight into [`ExecuteBatch`])
/// and the agent's reply to `tool/invoke`. Any other frame, or one that does
/// not read as this, goes the general way, which says what is wrong with it.
#[derive(Debug, Deserialize)]
pub struct HotFrame<'a> {
    /// Borrowed: a frame with escapes in it goes the general way.
    #[serde(borrow, default)]
    pub jsonrpc: Option<&'a str>,
    #[serde(default)]
    pub id: Value,
    #[serde(borrow, default)]
    pub method: Option<&'a str>,
    #[serde(default)]
    pub params: Option<ExecuteBatch>,
    /// `Some(Null)` for `"result": null`, as the general path reads it.
    #[serde(default, deserialize_with = "present")]
    pub result: Option<InvokeResult>,
    #[serde(default, deserialize_with = "present")]
    pub error: Option<Value>,
}

fn present<'de, D: serde::Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<Option<T>, D::Error> {
    T::deserialize(d).map(Some)
}

/// What a body returned, from the agent's `result` to a `tool/invoke`: its
/// `value`, or the whole result when it has none. Read straight from the
/// frame, so the common `{"value": …}` builds no map to take the value out of.
#[derive(Debug, PartialEq)]
pub struct InvokeResult(pub Value);

impl InvokeResult {
    /// The same, from a result already read into a tree.
    pub fn from_value(result: Value) -> Self {
        match result {
            Value::Object(mut map) => Self(match map.remove("value") {
                Some(value) => value,
                None => Value::Object(map),
            }),
            other => Self(other),
        }
    }
}

impl<'de> Deserialize<'de> for InvokeResult {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(InvokeResultVisitor)
    }
}

struct InvokeResultVisitor;

/// A key of the result object: `value`, or another one (kept by name).
enum Key {
    Value,
    Other(String),
}

impl<'de> Deserialize<'de> for Key {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl serde::de::Visitor<'_> for KeyVisitor {
            type Value = Key;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a key")
            }
            fn visit_str<E>(self, key: &str) -> Result<Key, E> {
                Ok(if key == "value" {
                    Key::Value
                } else {
                    Key::Other(key.to_owned())
                })
            }
        }
        d.deserialize_str(KeyVisitor)
    }
}

impl<'de> serde::de::Visitor<'de> for InvokeResultVisitor {
    type Value = InvokeResult;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<InvokeResult, A::Error> {
        let mut value = None;
        let mut others = serde_json::Map::new();
        while let Some(key) = map.next_key::<Key>()? {
            match key {
                // A repeated key: the last one wins, as in a `Value` tree.
                Key::Value => value = Some(map.next_value::<Value>()?),
                Key::Other(key) => {
                    others.insert(key, map.next_value()?);
                }
            }
        }
        Ok(InvokeResult(value.unwrap_or(Value::Object(others))))
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, seq: A) -> Result<InvokeResult, A::Error> {
        Value::deserialize(serde::de::value::SeqAccessDeserializer::new(seq)).map(InvokeResult)
    }

    fn visit_bool<E>(self, v: bool) -> Result<InvokeResult, E> {
        Ok(InvokeResult(Value::Bool(v)))
    }

    fn visit_i64<E>(self, v: i64) -> Result<InvokeResult, E> {
        Ok(InvokeResult(v.into()))
    }

    fn visit_u64<E>(self, v: u64) -> Result<InvokeResult, E> {
        Ok(InvokeResult(v.into()))
    }

    fn visit_f64<E>(self, v: f64) -> Result<InvokeResult, E> {
        Ok(InvokeResult(v.into()))
    }

    fn visit_str<E>(self, v: &str) -> Result<InvokeResult, E> {
        Ok(InvokeResult(v.into()))
    }

    fn visit_string<E>(self, v: String) -> Result<InvokeResult, E> {
        Ok(InvokeResult(v.into()))
    }

    fn visit_unit<E>(self) -> Result<InvokeResult, E> {
        Ok(InvokeResult(Value::Null))
    }

    fn visit_none<E>(self) -> Result<InvokeResult, E> {
        Ok(InvokeResult(Value::Null))
    }

    fn visit_some<D: serde::Deserializer<'de>>(self, d: D) -> Result<InvokeResult, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'a> HotFrame<'a> {
    /// `None` when the line is not an object, does not read as a hot frame,
    /// or is one the general path must judge (a bad version or id).
    pub fn read(line: &'a str) -> Option<Self> {
        // A struct also reads from an array; the general path refuses that.
        if !line.trim_start().starts_with('{') {
            return None;
        }
        let frame: Self = serde_json::from_str(line).ok()?;
        let valid_id = matches!(frame.id, Value::Null | Value::String(_) | Value::Number(_));
        (frame.jsonrpc == Some("2.0") && valid_id).then_some(frame)
    }
}
