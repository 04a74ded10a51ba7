//! What the CLI tests share.

use std::process::Output;

/// A finished command's stdout then stderr, as one text for assertions and their messages.
pub fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}
