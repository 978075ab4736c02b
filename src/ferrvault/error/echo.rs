//! A server message with the bearer it echoes taken out.
//!
//! # Guarantees
//! - Every whole occurrence of the secret is replaced by `<redacted>`.
//! - A message at its cut length ([`MAX_MESSAGE_CHARS`]) may have been cut inside an echo: the
//!   beginning of the secret left at its end is redacted too, however short (found by the
//!   `error_body` fuzz target: a token echoed across the cut showed its first characters).

use super::body::MAX_MESSAGE_CHARS;

/// What replaces an echo of the secret.
const REDACTED: &str = "<redacted>";

/// `message` without any echo of `secret`, whole or cut short by the message's bound.
pub(super) fn redact_echoes(message: &str, secret: &str) -> String {
    if secret.is_empty() {
        return message.to_owned();
    }
    let mut redacted = message.replace(secret, REDACTED);
    if message.chars().count() >= MAX_MESSAGE_CHARS {
        let cut_echo = (1..secret.len())
            .rev()
            .filter(|&len| secret.is_char_boundary(len))
            .find(|&len| redacted.ends_with(&secret[..len]));
        if let Some(len) = cut_echo {
            redacted.truncate(redacted.len() - len);
            redacted.push_str(REDACTED);
        }
    }
    redacted
}

#[cfg(test)]
mod tests {
    use super::*;

    const TOKEN: &str = "fvsat_Fz9qK2mW7xL4pR8tN3vB6yH1cJ5d";

    /// A message of exactly the cut length ending with `tail`.
    fn cut_message(tail: &str) -> String {
        let filler = "x".repeat(MAX_MESSAGE_CHARS - tail.chars().count());
        filler + tail
    }

    #[test]
    fn redact_echoes_should_replace_every_whole_echo() {
        assert_eq!(
            redact_echoes(&format!("token {TOKEN} is {TOKEN}"), TOKEN),
            "token <redacted> is <redacted>"
        );
    }

    #[test]
    fn redact_echoes_should_redact_the_beginning_of_an_echo_left_at_the_cut() {
        for len in [1, 6, 10, TOKEN.len() - 1] {
            let message = cut_message(&TOKEN[..len]);
            let redacted = redact_echoes(&message, TOKEN);
            assert!(redacted.ends_with("x<redacted>"), "{len}: {redacted}");
            assert!(!redacted.contains(&TOKEN[..len]), "{len}: {redacted}");
        }
    }

    #[test]
    fn redact_echoes_should_leave_a_message_shorter_than_the_cut_as_it_ends() {
        let message = format!("expected a token like {}", &TOKEN[..6]);
        assert_eq!(redact_echoes(&message, TOKEN), message);
    }

    #[test]
    fn redact_echoes_should_keep_the_message_when_there_is_no_secret() {
        assert_eq!(redact_echoes("nothing sent", ""), "nothing sent");
    }
}
