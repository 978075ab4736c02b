//! The field formatter of text log lines: `tracing_subscriber`'s default layout (the message,
//! then `name=value` pairs), each value and the message cut to [`MAX_MESSAGE_BYTES`] while it is
//! written ([`Bounded`]), so a field carrying a tenant's text never makes a line grow with it.
//!
//! # Guarantees
//! - A value within 1 KiB is written exactly as the default formatter writes it, but for an
//!   error, written as its `Display` without the default's `.sources` list (our errors name
//!   their cause in their own text).
//! - A longer one is written up to the bound, then the marker naming its length in all; it is
//!   never formatted whole first.

use std::fmt;

use tracing::field::{Field, Visit};
use tracing_subscriber::{
    field::{MakeVisitor, VisitFmt, VisitOutput},
    fmt::format::{DefaultVisitor, Writer},
};

use crate::reconcile::rules::bounds::bounded_text::{Bounded, MAX_MESSAGE_BYTES};

/// The text field formatter (use with `fmt_fields`).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct BoundedFields;

impl<'a> MakeVisitor<Writer<'a>> for BoundedFields {
    type Visitor = BoundedVisitor<'a>;

    fn make_visitor(&self, target: Writer<'a>) -> Self::Visitor {
        BoundedVisitor(DefaultVisitor::new(target, true))
    }
}

/// The default visitor, handed every value through [`Bounded`].
pub(crate) struct BoundedVisitor<'a>(DefaultVisitor<'a>);

impl Visit for BoundedVisitor<'_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        // As the default visitor: the message bare, other strings quoted.
        if field.name() == "message" {
            self.record_debug(field, &format_args!("{value}"));
        } else {
            self.record_debug(field, &value);
        }
    }

    fn record_error(&mut self, field: &Field, value: &(dyn std::error::Error + 'static)) {
        self.record_debug(field, &format_args!("{value}"));
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.0
            .record_debug(field, &Bounded::new(value, MAX_MESSAGE_BYTES));
    }
}

impl VisitOutput<fmt::Result> for BoundedVisitor<'_> {
    fn finish(self) -> fmt::Result {
        self.0.finish()
    }
}

impl VisitFmt for BoundedVisitor<'_> {
    fn writer(&mut self) -> &mut dyn fmt::Write {
        self.0.writer()
    }
}
