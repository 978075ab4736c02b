//! The template language's parser: a template string into its [`Template`] AST, once.
//!
//! The language is literal text and placeholders, nothing else:
//! ```text
//! template    := ( "$${" | placeholder | any other character )*
//! placeholder := "${" ws key ws ( "|" ws filter ws )* "}"
//! key         := [-._a-zA-Z0-9]{1,253}       (a Secret key)
//! filter      := name | "default" ws string
//! name        := base64 | base64decode | json | urlquery | trim | lower | upper
//! string      := '"' ( [^"\\] | '\"' | '\\' )* '"'
//! ws          := " "*
//! ```
//! `$${` is a literal `${`; a `$` before anything else is itself.
//!
//! # Guarantees
//! - Every error carries the 1-based column (in characters) where it was found and at most a
//!   key or filter name (each cut to [`MAX_SECRET_KEY`] characters), never text that could be a
//!   value: a template holds no values.
//! - Linear in the template's length; the AST holds at most the template's own characters.

use super::filters::Filter;
use crate::api::bounds::MAX_SECRET_KEY;

/// A parsed template: its parts in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Template {
    /// Literal text and placeholders, in the order they are rendered.
    pub(crate) parts: Vec<Part>,
}

/// One part of a template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Part {
    /// Text copied as is (`$${` already unescaped).
    Literal(String),
    /// A value, filtered.
    Placeholder(Placeholder),
}

/// `${KEY|filter…}`: the value of `key`, through `filters` in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Placeholder {
    /// The revealed (and transformed) key.
    pub(crate) key: String,
    /// Column of its `${`, from 1.
    pub(crate) column: usize,
    /// Its filters, each with the column of its name.
    pub(crate) filters: Vec<(Filter, usize)>,
}

/// Why a template does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseFailure {
    /// `${` without its `}`.
    #[error("column {0}: `${{` without a closing `}}` (write `$${{` for a literal `${{`)")]
    Unterminated(usize),
    /// A character that cannot stand where it is.
    #[error("column {0}: unexpected character; expected a key, `|` or `}}`")]
    Unexpected(usize),
    /// A key name longer than a Secret key can be.
    #[error("column {0}: key longer than {MAX_SECRET_KEY} characters")]
    KeyTooLong(usize),
    /// `|` without a filter name.
    #[error("column {0}: expected a filter name after `|`")]
    MissingFilter(usize),
    /// A filter outside the closed list.
    #[error(
        "column {column}: unknown filter {name:?}; expected base64, base64decode, json, urlquery, \
         trim, lower, upper or default \"x\""
    )]
    UnknownFilter {
        /// Its name, cut to [`MAX_SECRET_KEY`] characters.
        name: String,
        /// Its column.
        column: usize,
    },
    /// `default` without its quoted argument.
    #[error("column {0}: default needs a quoted argument, as in default \"x\"")]
    MissingArgument(usize),
    /// An argument after a filter that takes none.
    #[error("column {0}: this filter takes no argument")]
    UnexpectedArgument(usize),
    /// A `"` argument without its closing `"`.
    #[error("column {0}: string without its closing `\"`")]
    UnterminatedString(usize),
}

/// Parses `text`.
///
/// # Errors
/// The first [`ParseFailure`], with its column.
pub(crate) fn parse(text: &str) -> Result<Template, ParseFailure> {
    let mut cursor = Cursor {
        rest: text,
        column: 1,
    };
    let mut parts = Vec::new();
    let mut literal = String::new();
    while !cursor.rest.is_empty() {
        if cursor.eat("$${") {
            literal.push_str("${");
        } else if cursor.rest.starts_with("${") {
            if !literal.is_empty() {
                parts.push(Part::Literal(std::mem::take(&mut literal)));
            }
            parts.push(Part::Placeholder(placeholder(&mut cursor)?));
        } else if let Some(c) = cursor.bump() {
            literal.push(c);
        }
    }
    if !literal.is_empty() {
        parts.push(Part::Literal(literal));
    }
    Ok(Template { parts })
}

/// Where the parser is: the text left and its column.
struct Cursor<'a> {
    rest: &'a str,
    column: usize,
}

impl Cursor<'_> {
    fn peek(&self) -> Option<char> {
        self.rest.chars().next()
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.rest = &self.rest[c.len_utf8()..];
        self.column += 1;
        Some(c)
    }

    /// Consumes `prefix` (ASCII) when the text starts with it.
    fn eat(&mut self, prefix: &str) -> bool {
        let found = self.rest.starts_with(prefix);
        if found {
            self.rest = &self.rest[prefix.len()..];
            self.column += prefix.len();
        }
        found
    }

    fn skip_spaces(&mut self) {
        while self.eat(" ") {}
    }

    /// The longest run of characters matching `keep` (at most `max` are kept; the rest are
    /// consumed), with its column and whether it was cut.
    fn run(&mut self, keep: impl Fn(char) -> bool, max: usize) -> (String, usize, bool) {
        let column = self.column;
        let mut taken = String::new();
        let mut count = 0;
        while let Some(c) = self.peek().filter(|&c| keep(c)) {
            self.bump();
            count += 1;
            if count <= max {
                taken.push(c);
            }
        }
        (taken, column, count > max)
    }
}

/// A Secret key's characters (`IsConfigMapKey`).
pub(crate) fn is_key_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_')
}

/// `${…}` at the cursor.
fn placeholder(cursor: &mut Cursor<'_>) -> Result<Placeholder, ParseFailure> {
    let column = cursor.column;
    cursor.eat("${");
    cursor.skip_spaces();
    let (key, key_column, too_long) = cursor.run(is_key_char, MAX_SECRET_KEY);
    if too_long {
        return Err(ParseFailure::KeyTooLong(key_column));
    }
    if key.is_empty() {
        return Err(unexpected(cursor, column));
    }
    let mut filters = Vec::new();
    loop {
        cursor.skip_spaces();
        if cursor.eat("}") {
            return Ok(Placeholder { key, column, filters });
        }
        if !cursor.eat("|") {
            return Err(unexpected(cursor, column));
        }
        cursor.skip_spaces();
        filters.push(filter(cursor)?);
    }
}

/// What is wrong at the cursor inside the placeholder opened at `opened`: its end, or a
/// character that cannot stand there.
fn unexpected(cursor: &Cursor<'_>, opened: usize) -> ParseFailure {
    if cursor.rest.is_empty() {
        ParseFailure::Unterminated(opened)
    } else {
        ParseFailure::Unexpected(cursor.column)
    }
}

/// A filter (name and argument) at the cursor, with its column.
fn filter(cursor: &mut Cursor<'_>) -> Result<(Filter, usize), ParseFailure> {
    let (name, column, _) = cursor.run(|c| c.is_ascii_alphanumeric(), MAX_SECRET_KEY);
    if name.is_empty() {
        return Err(ParseFailure::MissingFilter(column));
    }
    let simple = match name.as_str() {
        "base64" => Some(Filter::Base64),
        "base64decode" => Some(Filter::Base64Decode),
        "json" => Some(Filter::Json),
        "urlquery" => Some(Filter::UrlQuery),
        "trim" => Some(Filter::Trim),
        "lower" => Some(Filter::Lower),
        "upper" => Some(Filter::Upper),
        "default" => None,
        _ => return Err(ParseFailure::UnknownFilter { name, column }),
    };
    cursor.skip_spaces();
    let argument_column = cursor.column;
    match (simple, cursor.peek() == Some('"')) {
        (Some(filter), false) => Ok((filter, column)),
        (Some(_), true) => Err(ParseFailure::UnexpectedArgument(argument_column)),
        (None, true) => Ok((Filter::Default(string(cursor)?), column)),
        (None, false) => Err(ParseFailure::MissingArgument(argument_column)),
    }
}

/// A `"…"` string at the cursor, with `\"` and `\\` unescaped.
fn string(cursor: &mut Cursor<'_>) -> Result<String, ParseFailure> {
    let column = cursor.column;
    cursor.eat("\"");
    let mut text = String::new();
    loop {
        match cursor.bump() {
            None => return Err(ParseFailure::UnterminatedString(column)),
            Some('"') => return Ok(text),
            Some('\\') if matches!(cursor.peek(), Some('"' | '\\')) => {
                text.extend(cursor.bump());
            }
            Some(c) => text.push(c),
        }
    }
}
