//! The exact shape of a decode error: a fuzz target that checks an error's text against it shows
//! the error quotes nothing of the input, whatever the input was (its `Debug` is built from the
//! same text).

/// Whether `message` is `FerrVaultError::decode(what, …)`'s text: `<what>: <category> error at
/// line <n> column <m>`, serde's category and position and nothing else.
pub fn is_serde_position(message: &str, what: &str) -> bool {
    let Some(rest) = message
        .strip_prefix(what)
        .and_then(|rest| rest.strip_prefix(": "))
    else {
        return false;
    };
    let Some((category, position)) = rest.split_once(" error at line ") else {
        return false;
    };
    let Some((line, column)) = position.split_once(" column ") else {
        return false;
    };
    ["Io", "Syntax", "Data", "Eof"].contains(&category) && is_number(line) && is_number(column)
}

fn is_number(text: &str) -> bool {
    !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serde_position_should_accept_only_category_and_position() {
        assert!(is_serde_position(
            "reveal: Syntax error at line 1 column 7",
            "reveal"
        ));
        assert!(is_serde_position(
            "reveal: Eof error at line 12 column 0",
            "reveal"
        ));
        assert!(!is_serde_position(
            "reveal: Syntax error at line 1 column 7 x",
            "reveal"
        ));
        assert!(!is_serde_position(
            "reveal: invalid type: string \"v\" error at line 1 column 7",
            "reveal"
        ));
        assert!(!is_serde_position(
            "oidc: Syntax error at line 1 column 7",
            "reveal"
        ));
    }
}
