use super::*;

#[test]
fn message_should_be_the_error_string_or_else_the_message_string() {
    assert_eq!(
        server_message(br#"{"error":"nope","message":"m"}"#).as_deref(),
        Some("nope")
    );
    assert_eq!(
        server_message(br#"{"message":"m","error":"nope"}"#).as_deref(),
        Some("nope")
    );
    assert_eq!(
        server_message(br#"{"error":{"code":7},"message":"m"}"#).as_deref(),
        Some("m")
    );
    assert_eq!(server_message(br#"{"error":42,"message":[1,[2]]}"#), None);
    assert_eq!(
        server_message(br#"{"error":"first","error":"second"}"#).as_deref(),
        Some("first")
    );
    assert_eq!(server_message(br#"{"error":" \n "}"#), None);
}

#[test]
fn anything_but_a_whole_object_should_have_no_message() {
    for body in [
        &b"<html>error</html>"[..],
        b"",
        br#"["error"]"#,
        br#""error""#,
        br#"{"error":"cut"#,
        br#"{"error":"cut","pad":[0,0,"#,
    ] {
        assert_eq!(server_message(body), None, "{}", String::from_utf8_lossy(body));
    }
}

#[test]
fn message_should_be_cut_and_cleaned_while_it_is_decoded() {
    let body = format!(r#"{{"error":"a\nb\u0007{}"}}"#, "é".repeat(10_000));
    let message = server_message(body.as_bytes()).expect("a message");
    assert_eq!(message.chars().count(), MAX_MESSAGE_CHARS);
    assert!(message.starts_with("abé"), "{message}");
}

#[test]
fn fields_around_the_message_should_be_skipped_whatever_their_shape() {
    let deep = format!("{}{}", "[".repeat(100), "]".repeat(100));
    let body = format!(
        r#"{{"pad":{deep},"zeros":[{}0],"error":"kept"}}"#,
        "0,".repeat(100_000)
    );
    assert_eq!(server_message(body.as_bytes()).as_deref(), Some("kept"));
}
