//! `critsec parse`: parse Lucene classic queries and print Lucene's `Query.toString(field)`.

use std::io::{BufRead, Write};
use std::process::ExitCode;

use super::UsageError;
use anyhow::Context;
use critsec_parser::{self as parser, Analyzer, Operator, ParseError, ParserOptions, QueryParser};

/// Parse queries in Lucene's classic syntax and print their rendering or their error.
#[derive(clap::Args, Debug)]
pub struct ParseArgs {
    /// Queries to parse; each result is printed on its own line.
    #[arg(required_unless_present = "jsonl")]
    pub queries: Vec<String>,

    /// Read one JSON string per line from stdin and write one JSON object per line:
    /// `{"ok": "<rendering>"}` or `{"error": {"class", "message", "column"}}`.
    #[arg(long, conflicts_with = "queries")]
    pub jsonl: bool,

    /// Field of clauses without a `field:` prefix; it is not printed in renderings.
    #[arg(long, default_value = "field")]
    pub default_field: String,

    /// How clauses without `AND`/`OR` combine: `or` or `and`.
    #[arg(long, default_value = "or", value_parser = parse_operator)]
    pub default_operator: Operator,

    /// Analyzer: `simple` (letters, lowercased), `whitespace`, `whitespace-lowercase`.
    #[arg(long, default_value = "simple", value_parser = parse_analyzer)]
    pub analyzer: Analyzer,

    /// Accept `*` or `?` as the first character of wildcard and prefix terms.
    #[arg(long)]
    pub allow_leading_wildcard: bool,

    /// Analyze each bare term alone instead of runs of bare terms together.
    #[arg(long)]
    pub split_on_whitespace: bool,

    /// Slop of phrases written without `~N`.
    #[arg(long, default_value_t = 0)]
    pub phrase_slop: i32,

    /// Most clauses one boolean query may hold.
    #[arg(long, default_value_t = 1024)]
    pub max_clause_count: usize,

    /// Parsing strategy: `predictive` (ours) or `backtracking` (JavaCC's shape).
    #[arg(long, default_value = "predictive", value_parser = clap::builder::PossibleValuesParser::new(critsec_sync::kind::ids::<parser::ParserKind>()))]
    pub strategy: String,
}

fn parse_operator(s: &str) -> Result<Operator, String> {
    s.parse().map_err(|e: parser::OptionsError| e.to_string())
}

fn parse_analyzer(s: &str) -> Result<Analyzer, String> {
    s.parse().map_err(|e: parser::OptionsError| e.to_string())
}

impl ParseArgs {
    fn options(&self) -> ParserOptions {
        ParserOptions {
            default_field: self.default_field.clone(),
            default_operator: self.default_operator,
            analyzer: self.analyzer,
            allow_leading_wildcard: self.allow_leading_wildcard,
            split_on_whitespace: self.split_on_whitespace,
            phrase_slop: self.phrase_slop,
            max_clause_count: self.max_clause_count,
            ..ParserOptions::default()
        }
    }
}

/// Runs the subcommand: exit 0 when every query parsed, 1 when any query was an error.
pub fn run(args: &ParseArgs) -> anyhow::Result<ExitCode> {
    let parser = args
        .strategy
        .parse::<parser::ParserKind>()?
        .build(args.options());
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let mut failed = false;
    if args.jsonl {
        let stdin = std::io::stdin();
        for (n, line) in stdin.lock().lines().enumerate() {
            let line = line.context("reading stdin")?;
            if line.trim().is_empty() {
                continue;
            }
            let query: String = serde_json::from_str(&line).map_err(|e| {
                UsageError(format!(
                    "stdin line {}: expected one JSON string per line: {e}",
                    n + 1
                ))
            })?;
            let result = parser.parse(&query);
            failed |= result.is_err();
            writeln!(out, "{}", json_line(parser.as_ref(), &result))?;
            out.flush()?;
        }
    } else {
        for query in &args.queries {
            let result = parser.parse(query);
            failed |= result.is_err();
            match result {
                Ok(q) => writeln!(
                    out,
                    "{}",
                    q.to_string_field(&parser.options().default_field)
                )?,
                Err(e) => writeln!(
                    out,
                    "error[{}] column {}: {}",
                    e.class(),
                    e.column(),
                    one_line(&e)
                )?,
            }
        }
    }
    out.flush()?;
    Ok(if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

fn json_line(
    parser: &dyn QueryParser,
    result: &Result<parser::Query, ParseError>,
) -> serde_json::Value {
    match result {
        Ok(q) => serde_json::json!({ "ok": q.to_string_field(&parser.options().default_field) }),
        Err(e) => serde_json::json!({
            "error": { "class": e.class().as_str(), "message": e.to_string(), "column": e.column() }
        }),
    }
}

/// The message on one line: JavaCC's multi-line expected-token list joined with spaces.
fn one_line(e: &ParseError) -> String {
    e.to_string()
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}
