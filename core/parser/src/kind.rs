//! The parsing strategies by kind: each parser's id (a leaf: the parsers name themselves by it;
//! `strategies.rs` builds them).

use critsec_sync::kind::StrategyKind;

/// The parsing strategies, as the command line and benchmark parameters name them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ParserKind {
    /// [`BacktrackingParser`]: JavaCC's shape.
    Backtracking,
    /// [`PredictiveParser`]: ours.
    Predictive,
}

impl StrategyKind for ParserKind {
    const ALL: &'static [Self] = &[ParserKind::Backtracking, ParserKind::Predictive];

    fn id(self) -> &'static str {
        match self {
            ParserKind::Backtracking => "backtracking",
            ParserKind::Predictive => "predictive",
        }
    }
}

critsec_sync::strategy_kind_text!(ParserKind);
