//! Models: what the lexer's character stream does when the token manager reads past the end of
//! the query.
//! Follows: Lucene's `FastCharStream` (`readChar()` → `refill()`, which at the end of its
//! `Reader` does `throw new IOException("read past eof")`) and the `catch (IOException e)` blocks
//! of the JavaCC-generated `QueryParserTokenManager` (`BeginToken` in `getNextToken`, the
//! `readChar` calls of `jjMoveNfa_*`, `jjStartNfaWithStates_*`, `jjMoveStringLiteralDfa1_*`, and
//! the error path that peeks one character further before raising `TokenMgrError`).
//! Hot path: every parse meets the end of input at least once (the `<EOF>` token), and once more
//! whenever the last token's matcher could still have grown; each time `FastCharStream` builds a
//! fresh exception, so its stack trace is filled every time. [`FastCharStream`] does the same
//! with a fresh [`ReadPastEof`] holding `Backtrace::capture()`; under `RUST_BACKTRACE=1` (our
//! analogue of the JDWP agent) that is a stack walk behind std's global backtrace lock.

use std::backtrace::Backtrace;

/// Java's `IOException("read past eof")`: a fresh value per read past the end, recording where
/// it was raised as `Throwable`'s constructor does with `fillInStackTrace()`.
#[derive(Debug)]
pub struct ReadPastEof {
    backtrace: Backtrace,
}

impl ReadPastEof {
    /// A new signal with the current stack (captured only when backtraces are enabled).
    // Never inlined or cached: one capture per read past the end is the cost being modelled.
    #[inline(never)]
    #[cold]
    fn raise() -> Self {
        ReadPastEof {
            backtrace: Backtrace::capture(),
        }
    }

    /// The stack at the read (disabled unless `RUST_BACKTRACE`/`RUST_LIB_BACKTRACE` enable it).
    pub fn backtrace(&self) -> &Backtrace {
        &self.backtrace
    }
}

/// How a stream answers a read at the end of the input. The lexer calls this exactly where
/// JavaCC's token manager calls `readChar()` with no character left, and catches what it gives.
pub trait CharStream {
    /// A read with no character left: `Err` for a stream that signals the end by error value.
    fn read_past_end() -> Result<(), ReadPastEof>;
}

/// Lucene's `FastCharStream`: the end of input is a fresh [`ReadPastEof`] every time (the
/// backtracking strategy's stream).
#[derive(Debug, Clone, Copy, Default)]
pub struct FastCharStream;

impl CharStream for FastCharStream {
    fn read_past_end() -> Result<(), ReadPastEof> {
        Err(ReadPastEof::raise())
    }
}

/// A stream whose reader checks the length instead: reaching the end raises nothing (the
/// predictive strategy's, and every lexer's by default).
#[derive(Debug, Clone, Copy, Default)]
pub struct EndChecked;

impl CharStream for EndChecked {
    #[inline(always)]
    fn read_past_end() -> Result<(), ReadPastEof> {
        Ok(())
    }
}
