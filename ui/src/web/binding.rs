//! What an answer from the page is bound to: the request it was shown (its
//! prompt and execution), the SHA-256 of the arguments shown, the deadline,
//! and the device it was shown on, MACed with a key of this console
//! (HMAC-SHA256). The page carries it in the form; the console takes an
//! answer only with a MAC it made, once, while that very call still waits
//! with those very arguments.

use hmac::{Hmac, Mac};
use sha2::{Digest, Sha256};

use super::devices::hex;

type HmacSha256 = Hmac<Sha256>;

/// One answer's binding, as the form carries it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Binding {
    /// The request's id in the approval queue.
    pub prompt: u64,
    /// The engine's execution id of the call.
    pub execution: u64,
    /// SHA-256 (hex) of the arguments exactly as the page showed them.
    pub digest: String,
    /// When the call stops waiting (milliseconds since the Unix epoch).
    pub deadline_ms: u64,
}

/// The SHA-256 (hex) of arguments as shown.
pub fn digest(arguments: &str) -> String {
    hex(&Sha256::digest(arguments.as_bytes()))
}

impl Binding {
    fn mac_for(&self, key: &[u8; 32], device: u64) -> HmacSha256 {
        // Infallible: HMAC takes a key of any length.
        let mut mac = <HmacSha256 as Mac>::new_from_slice(key).unwrap_or_else(|_| unreachable!());
        let message = format!(
            "tether web answer v1\n{device}\n{}\n{}\n{}\n{}",
            self.prompt, self.execution, self.digest, self.deadline_ms
        );
        mac.update(message.as_bytes());
        mac
    }

    /// The form's field: `prompt.execution.digest.deadline.mac`.
    pub fn field(&self, key: &[u8; 32], device: u64) -> String {
        let mac = hex(&self.mac_for(key, device).finalize().into_bytes());
        format!(
            "{}.{}.{}.{}.{mac}",
            self.prompt, self.execution, self.digest, self.deadline_ms
        )
    }

    /// Reads a form's field back: the binding and its MAC's bytes, when the
    /// MAC is this console's for `device` (compared in constant time).
    pub fn verify(field: &str, key: &[u8; 32], device: u64) -> Option<(Self, Vec<u8>)> {
        let mut parts = field.trim().split('.');
        let prompt = parts.next()?.parse().ok()?;
        let execution = parts.next()?.parse().ok()?;
        let digest = parts.next()?.to_owned();
        let deadline_ms = parts.next()?.parse().ok()?;
        let mac = unhex(parts.next()?)?;
        if parts.next().is_some() || digest.len() != 64 {
            return None;
        }
        let binding = Self {
            prompt,
            execution,
            digest,
            deadline_ms,
        };
        binding.mac_for(key, device).verify_slice(&mac).ok()?;
        Some((binding, mac))
    }
}

fn unhex(text: &str) -> Option<Vec<u8>> {
    if text.len() % 2 != 0 {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn binding() -> Binding {
        Binding {
            prompt: 7,
            execution: 42,
            digest: digest("{\"path\": \"x\"}"),
            deadline_ms: 1_800_000_000_000,
        }
    }

    #[test]
    fn a_field_reads_back_only_with_its_key_and_device_and_unchanged() {
        let key = [3_u8; 32];
        let field = binding().field(&key, 1);
        assert_eq!(Binding::verify(&field, &key, 1).map(|(b, _)| b), Some(binding()));
        assert_eq!(Binding::verify(&field, &[4_u8; 32], 1), None, "another console's key");
        assert_eq!(Binding::verify(&field, &key, 2), None, "shown on another device");
        let mut later = binding();
        later.deadline_ms += 60_000;
        let forged = format!(
            "{}{}",
            later.field(&key, 9).rsplit_once('.').map_or("", |(b, _)| b),
            &field[field.rfind('.').unwrap_or(0)..]
        );
        assert_eq!(
            Binding::verify(&forged, &key, 1),
            None,
            "a deadline moved under the same MAC"
        );
        assert_eq!(Binding::verify("7.42.zz.1.00", &key, 1), None);
        assert_eq!(Binding::verify("", &key, 1), None);
    }
}
