//! How a message stays within the 1 KiB bound of a condition message while it is built: a
//! message quoting what a tenant wrote is cut as it is formatted ([`bounded`]); a list of names
//! shows those that fit in [`LIST_BUDGET_BYTES`] and counts the rest ([`first_names`]).

use std::fmt;

use crate::reconcile::rules::bounds::bounded_text::{self, Bounded, MAX_MESSAGE_BYTES};

/// The most bytes of names a message lists: with its words and the count of the names left out,
/// it stays within the 1 KiB bound of a message.
pub(crate) const LIST_BUDGET_BYTES: usize = 768;

/// The first of `names` (at most `most`, together no longer than [`LIST_BUDGET_BYTES`]) joined by
/// spaces, and how many are left out. The first name is shown cut to the budget if it alone does
/// not fit, so a list is never shown empty while it has names.
pub(crate) fn first_names(names: &[String], most: usize) -> (String, usize) {
    let mut shown = String::new();
    let mut count = 0;
    for name in names.iter().take(most) {
        let needed = name.len() + usize::from(count > 0);
        if shown.len() + needed > LIST_BUDGET_BYTES {
            if count == 0 {
                shown = bounded_text::cut(name.clone(), LIST_BUDGET_BYTES);
                count = 1;
            }
            break;
        }
        if count > 0 {
            shown.push(' ');
        }
        shown.push_str(name);
        count += 1;
    }
    (shown, names.len() - count)
}

/// `args` formatted, cut to the 1 KiB bound of a message as it is written.
pub(super) fn bounded(args: fmt::Arguments<'_>) -> String {
    format!("{:?}", Bounded::new(&args, MAX_MESSAGE_BYTES))
}

/// " (and N more)" for `hidden` > 0, else nothing.
pub(super) fn and_more(hidden: usize) -> String {
    match hidden {
        0 => String::new(),
        hidden => format!(" (and {hidden} more)"),
    }
}
