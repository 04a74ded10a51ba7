//! Conformance suite: every strategy must print what Lucene's `Query.toString("field")` prints for
//! the rows below, or fail with the same error class (and column where given).
//!
//! Rows follow `QueryParserTestBase.java` / `TestQueryParser.java` (apache/lucene main) and the
//! verified probes of the research file `lucene-classic-syntax.md`; the analyzer and options of
//! each table are those the Lucene test used. Expected values were derived from Lucene's code,
//! not copied from its test sources.

use super::*;

/// Expected outcome: a rendering, or `!class` / `!class@column` for an error.
fn check_row(p: &dyn QueryParser, input: &str, expected: &str) {
    let got = p.parse(input);
    let field = p.options().default_field.clone();
    if let Some(err) = expected.strip_prefix('!') {
        let (class, column) = match err.split_once('@') {
            Some((c, col)) => (c, Some(col.parse::<usize>().expect("column in table"))),
            None => (err, None),
        };
        match got {
            Ok(q) => panic!(
                "[{}] {input:?}: expected {class} error, got {:?}",
                p.id(),
                q.to_string_field(&field)
            ),
            Err(e) => {
                assert_eq!(e.class().as_str(), class, "[{}] {input:?}: {e}", p.id());
                if let Some(col) = column {
                    assert_eq!(e.column(), col, "[{}] {input:?}: {e}", p.id());
                }
            }
        }
    } else {
        match got {
            Ok(q) => assert_eq!(
                q.to_string_field(&field),
                expected,
                "[{}] {input:?}: {q:?}",
                p.id()
            ),
            Err(e) => panic!(
                "[{}] {input:?}: expected {expected:?}, got error {e}",
                p.id()
            ),
        }
    }
}

fn run_table(
    make: fn(ParserOptions) -> Box<dyn QueryParser>,
    opts: ParserOptions,
    rows: &[(&str, &str)],
) {
    let p = make(opts);
    for (input, expected) in rows {
        check_row(p.as_ref(), input, expected);
    }
}

fn with(f: impl FnOnce(&mut ParserOptions)) -> ParserOptions {
    let mut o = ParserOptions::default();
    f(&mut o);
    o
}

/// Default options: `simple` analyzer, default operator OR (testSimple and friends).
const SIMPLE_OR: &[(&str, &str)] = &[
    ("term", "term"),
    ("Term", "term"),
    ("term1", "term"),
    ("t\u{e9}rm", "t\u{e9}rm"),
    ("\u{c4}\u{d6}", "\u{e4}\u{f6}"),
    ("3", ""),
    ("a-b", "a b"),
    ("x a-b", "x a b"),
    ("x +a-b", "x +(a b)"),
    ("germ term^2.0", "germ (term)^2.0"),
    ("term^2", "(term)^2.0"),
    ("term^2.5", "(term)^2.5"),
    ("term^0", "(term)^0.0"),
    ("term^1", "(term)^1.0"),
    ("term^10", "(term)^10.0"),
    ("term^2.3", "(term)^2.3"),
    ("term^0.0001", "(term)^1.0E-4"),
    ("term^10000000", "(term)^1.0E7"),
    ("term^2.5.1", "(term)^2.5"),
    ("term^2b", "(term)^2.0 b"),
    ("a AND b", "+a +b"),
    ("a && b", "+a +b"),
    ("a OR b", "a b"),
    ("a || b", "a b"),
    ("a and b", "a and b"),
    ("a AND NOT b", "+a -b"),
    ("a AND !b", "+a -b"),
    ("a !b", "a -b"),
    ("a!b", "a -b"),
    ("a -b", "a -b"),
    ("a +b", "a +b"),
    ("+a -b c", "+a -b c"),
    ("c OR (a AND b)", "c (+a +b)"),
    ("a AND b OR c", "+a +b c"),
    ("a OR b AND c", "a +b +c"),
    ("A AND B OR C AND D", "+a +b +c +d"),
    ("a AND NOT b OR c", "+a -b c"),
    ("-a AND b", "-a +b"),
    ("-a OR b", "-a b"),
    ("+a OR b", "+a b"),
    ("((a OR b) AND NOT c) OR d", "(+(a b) -c) d"),
    (
        "+title:(dog OR cat) -author:\"bob dole\"",
        "+(title:dog title:cat) -author:\"bob dole\"",
    ),
    ("foo:term AND field:anotherTerm", "+foo:term +anotherterm"),
    ("term AND \"phrase phrase\"", "+term +\"phrase phrase\""),
    ("\"hello there\"", "\"hello there\""),
    ("(a)", "a"),
    ("((a b))", "a b"),
    ("field2:(z)", "field2:z"),
    ("-a", "-a"),
    ("+a", "+a"),
    ("+(a b)", "+(a b)"),
    ("NOT (a AND b)", "-(+a +b)"),
    ("! a", "a"),
    ("a - b", "a b"),
    ("a && ! b", "+a b"),
    ("a OR ! b", "a b"),
    ("field=a", "field a"),
    ("field>=a", "field a"),
    ("field<a", "field a"),
    ("a ANDY", "a andy"),
    ("NOTa", "nota"),
    ("a &&b", "a b"),
    ("a b AND c d", "a +b +c d"),
    ("a b c", "a b c"),
    ("a b^2 c", "a (b)^2.0 c"),
    ("a b* c", "a b* c"),
    ("a b~ c", "a b~2 c"),
    ("a b:c d", "a b:c d"),
    ("a 3", "a"),
    ("a (b (c (d)))", "a (b (c d))"),
    ("(a b)^2", "(a b)^2.0"),
    ("x (a b)^2", "x (a b)^2.0"),
    ("f:(a b)", "f:a f:b"),
    ("f:(a g:b)", "f:a g:b"),
    ("f:(a)^3", "(f:a)^3.0"),
    ("F:a", "F:a"),
    ("f :a", "f:a"),
    ("f: a", "f:a"),
    ("f : a", "f:a"),
    ("f:a g:b h:c", "f:a g:b h:c"),
    ("f:A", "f:a"),
    ("f:1", ""),
    ("f:(1 2)", ""),
    ("(1 2)^2 a", "a"),
    ("\"term germ\"~2", "\"term germ\"~2"),
    ("\"term germ\"~2^2", "(\"term germ\"~2)^2.0"),
    ("\"term germ\"^2~2", "(\"term germ\"~2)^2.0"),
    ("\"term\"~2", "term"),
    ("\" \"~2 germ", "germ"),
    ("\"a b\"~1.5", "\"a b\"~1"),
    ("\"a b\"~1e1", "\"a b\"~10"),
    ("\"a b\"~1e10", "\"a b\"~2147483647"),
    ("\"a b\"~NaN", "\"a b\""),
    ("\"a b\"~abc", "\"a b\""),
    ("\"a b\"~0", "\"a b\""),
    ("\"a\"~-1", "a"),
    ("\"\"", ""),
    ("\"A B\"", "\"a b\""),
    ("f:\"a b\"", "f:\"a b\""),
    ("\"a1b\"", "\"a b\""),
    ("\"a b\"^2", "(\"a b\")^2.0"),
    ("term*", "term*"),
    ("Term*", "term*"),
    ("term*^2", "(term*)^2.0"),
    ("te?m", "te?m"),
    ("Te?m*gerM", "te?m*germ"),
    ("a*b*", "a*b*"),
    ("a*b", "a*b"),
    ("term~", "term~2"),
    ("term~1", "term~1"),
    ("term~0", "term~0"),
    ("term~0.7", "term~1"),
    ("roam~0.8", "roam~0"),
    ("roam~0.5", "roam~2"),
    ("term~^3", "(term~2)^3.0"),
    ("term^3~", "(term~2)^3.0"),
    ("term~2^3", "(term~2)^3.0"),
    ("Term~1", "term~1"),
    ("a~1d", "a~1"),
    ("a~2f", "a~2"),
    ("a~0x1p0", "a~1"),
    ("a~NaN", "a~0"),
    ("a~-0", "a~0"),
    ("a~abc", "a~2"),
    ("a~2b", "a~2"),
    ("abcd~1e-1", "abcd~2"),
    ("a~3", "a~2"),
    ("a~2147483648", "a~2"),
    ("a*~2", "a*"),
    ("te?m~2", "te?m"),
    ("/a/~2", "/a/"),
    ("/[a-z]+/", "/[a-z]+/"),
    ("/A.C/", "/a.c/"),
    ("f:/ab/", "f:/ab/"),
    ("/ab/^3", "(/ab/)^3.0"),
    ("/a\\/b/", "/a\\/b/"),
    ("/a b/", "/a b/"),
    ("x /y/ z", "x /y/ z"),
    ("*:*", "*:*"),
    ("*:*^2", "(*:*)^2.0"),
    ("+*:* -a", "+*:* -a"),
    ("f:(*:*)", "*:*"),
    ("*:a", "*:a"),
    ("*:a*", "*:a*"),
    ("A\\B*", "ab*"),
    ("a\\*", "a"),
    ("[a TO z]", "[a TO z]"),
    ("[A TO C]", "[a TO c]"),
    ("{a TO z}", "{a TO z}"),
    ("[ a TO z}", "[a TO z}"),
    ("{ a TO * ]", "{a TO *]"),
    ("[* TO *]", "[* TO *]"),
    ("[\\* TO \"*\"]", "[\\* TO \\*]"),
    ("gack ( bar blar { a TO z}) ", "gack (bar blar {a TO z})"),
    ("f:[a TO b]", "f:[a TO b]"),
    ("[a TO b]^2", "([a TO b])^2.0"),
    ("[1 TO 10]", "[1 TO 10]"),
    ("[\"a b\" TO c]", "[a b TO c]"),
    ("[\"\" TO b]", "[\"\" TO b]"),
    ("[TO TO TO]", "[to TO to]"),
    ("[\"a[i]\" TO \"b[i]\"]", "[a[i] TO b[i]]"),
    ("[a TO b\u{3000}]", "[a TO b\u{3000}]"),
    ("[\"a\\\"b\" TO c]", "[a\"b TO c]"),
    ("[a\\]b TO c]", "!syntax@3"),
    ("[a TO b] c", "[a TO b] c"),
    ("term\u{3000}term\u{3000}term", "term term term"),
    ("term\tterm\nterm\r\nterm", "term term term term"),
    ("\u{3000}a\u{3000}", "a"),
];

/// Errors under the default options, with the column where it is certain.
const ERRORS: &[(&str, &str)] = &[
    ("", "!syntax@0"),
    ("   ", "!syntax@3"),
    ("a AND", "!syntax@5"),
    ("AND a", "!syntax@0"),
    ("a AND AND b", "!syntax@6"),
    ("a OR", "!syntax@4"),
    ("a -", "!syntax@3"),
    ("NOT", "!syntax@3"),
    ("&&", "!syntax@0"),
    ("||", "!syntax@0"),
    ("--a", "!syntax@1"),
    ("+-a", "!syntax@1"),
    ("NOT -a", "!syntax@4"),
    ("a:", "!syntax@2"),
    (":a", "!syntax@0"),
    ("a:b:c", "!syntax@3"),
    ("field:term:with:colon", "!syntax@10"),
    ("(sub query)^5.0^2.0", "!syntax@15"),
    ("(foo bar", "!syntax@8"),
    ("foo bar)", "!syntax@7"),
    ("foo bar))", "!syntax@7"),
    ("secret AND illegal) AND access:confidential", "!syntax@18"),
    ("()", "!syntax@1"),
    ("a AND (b", "!syntax@8"),
    ("a^", "!syntax@2"),
    ("f:-a", "!syntax@2"),
    ("NOT:a", "!syntax@3"),
    ("a:AND", "!syntax@2"),
    ("(a)~2", "!syntax@3"),
    ("a~2~3", "!syntax@3"),
    ("a^2^3", "!syntax@3"),
    ("\"a\"^2^3", "!syntax@5"),
    ("(a)(b)", "a b"),
    ("{A B}", "!syntax@3"),
    ("[TO B]", "!syntax@4"),
    ("[A TO]", "!syntax@5"),
    ("[a TO b", "!syntax@7"),
    ("[a b c]", "!syntax@3"),
    ("[]", "!syntax@1"),
    ("[a[i] TO b[i]]", "!syntax@4"),
    ("[a\tTO\tb]", "!syntax@7"),
    ("[a TO b TO c]", "!syntax@8"),
    ("*:", "!syntax@2"),
    ("a^x", "!lexical@2"),
    ("a^ 2", "!lexical@2"),
    ("a^.5", "!lexical@2"),
    ("\"some phrase", "!lexical@12"),
    ("\\", "!lexical@1"),
    ("XY\\", "!lexical@3"),
    ("/abc", "!lexical@4"),
    ("a/b", "!lexical@3"),
    ("/a/b/", "!lexical@5"),
    ("CI/CD", "!lexical@5"),
    ("[a TO b]]", "!lexical@8"),
    ("a ]", "!lexical@2"),
    ("a }", "!lexical@2"),
    ("*Term", "!semantic@0"),
    ("?Term", "!semantic@0"),
    ("*", "!semantic@0"),
    ("f:*", "!semantic@2"),
    ("**", "!semantic@0"),
    ("a *b", "!semantic@2"),
    ("\\**", "!semantic@0"),
    ("term~1.1", "!semantic@0"),
    ("a~-1", "!semantic@0"),
    ("a~1.5", "!semantic@0"),
    ("a~Infinity", "!semantic@0"),
    ("a~3000000000", "!semantic@0"),
    ("XY\\u005G", "!semantic@0"),
    ("XY\\u005", "!semantic@0"),
    ("a\\u", "!semantic@0"),
    ("x a\\u00", "!semantic@0"),
    ("[a\\ TO b]", "!semantic@1"),
    ("/a\\u/", "!semantic@0"),
    ("f\\u:a", "!semantic@0"),
    ("\"a b\"~-1", "!runtime@0"),
    ("\"a b\" \"c d\"~-2", "!runtime@6"),
    ("a \"unterminated", "!lexical@15"),
    ("a ) \"unterminated", "!syntax@2"),
    ("*a \"x", "!lexical@5"),
    ("*a b \"x", "!semantic@0"),
];

/// testEscaped and other rows that Lucene runs with the `whitespace` analyzer.
const WHITESPACE: &[(&str, &str)] = &[
    ("Term", "Term"),
    ("a\\\\\\+b", "a\\+b"),
    ("a\\-b:c", "a-b:c"),
    ("a\\+b:c", "a+b:c"),
    ("a\\:b:c", "a:b:c"),
    ("a\\\\b:c", "a\\b:c"),
    ("a:b\\-c", "a:b-c"),
    ("a:b\\+c*", "a:b+c*"),
    ("a:b\\-?c", "a:b\\-?c"),
    ("a:b\\+?c", "a:b\\+?c"),
    ("a:b\\:?c", "a:b\\:?c"),
    ("a:b\\\\?c", "a:b\\\\?c"),
    ("a:b\\-c~", "a:b-c~2"),
    ("[ a\\- TO a\\+ ]", "[a- TO a+]"),
    ("[ a\\: TO a\\~ ]", "[a: TO a~]"),
    ("[ a\\\\ TO a\\* ]", "[a\\ TO a*]"),
    (
        "[\"c\\:\\\\temp\\\\\\~foo0.txt\" TO \"c\\:\\\\temp\\\\\\~foo9.txt\"]",
        "[c:\\temp\\~foo0.txt TO c:\\temp\\~foo9.txt]",
    ),
    ("a\\\\\\+b", "a\\+b"),
    ("a \\\"b c\\\" d", "a \"b c\" d"),
    ("\"a \\\"b c\\\" d\"", "\"a \"b c\" d\""),
    ("\"a \\+b c d\"", "\"a +b c d\""),
    ("c\\:\\\\temp\\\\\\~foo.txt", "c:\\temp\\~foo.txt"),
    ("XY\\u0005A", "XY\u{5}A"),
    ("\\u0041", "A"),
    ("a\\u0020b", "a b"),
    ("(item:\\\\ item:ABCD\\\\)", "item:\\ item:ABCD\\"),
    ("(\"a\\\\\") or (\"b\")", "a\\ or b"),
    ("\\*", "*"),
    ("\\ ", ""),
    ("a\\ b", "a b"),
    ("f\\:x:a", "f:x:a"),
    ("a - b", "a - b"),
    ("a + b", "a + b"),
    ("a ! b", "a ! b"),
    ("a && ! b", "+a +! b"),
    ("a\\*", "a*"),
    ("a*", "a*"),
    ("foo\\?ba?r", "foo\\?ba?r"),
    ("Te?m*GerM", "Te?m*GerM"),
    ("[A TO Z]", "[A TO Z]"),
    ("/A.C/", "/A.C/"),
    ("AbC~1", "AbC~1"),
    ("term^2.5.1", "(term)^2.5 .1"),
    ("a&&b", "a&&b"),
    ("a.b,c;d", "a.b,c;d"),
    ("3", "3"),
    ("\"a b\"", "\"a b\""),
    ("t\u{1F600}t", "t\u{1F600}t"),
];

const WHITESPACE_LOWERCASE: &[(&str, &str)] = &[
    ("A:B", "A:b"),
    ("Te?m*GerM", "te?m*germ"),
    ("Te\\M?", "te\\M?"),
    ("[A TO Z]", "[a TO z]"),
    ("/A.C/", "/a.c/"),
    ("AbC~1", "abc~1"),
    ("\"A B\"", "\"a b\""),
    ("ABC*", "abc*"),
    ("\u{130}", "i"),
    ("a-B", "a-b"),
    ("1 2 3", "1 2 3"),
];

/// testDefaultOperator-style rows: default operator AND.
const SIMPLE_AND: &[(&str, &str)] = &[
    ("a b", "+a +b"),
    ("a b c", "+a +b +c"),
    ("a b OR c", "+a b c"),
    ("+a OR b", "a b"),
    ("-a OR b", "-a b"),
    ("a || b c", "a b +c"),
    ("a OR NOT b", "a -b"),
    ("a (b c)", "+a +(+b +c)"),
    ("a AND b", "+a +b"),
    ("a OR b", "a b"),
    ("weltbank \r\n +worlbank", "+weltbank +worlbank"),
    ("weltbank \n+worlbank", "+weltbank +worlbank"),
    ("a 3", "+a"),
    ("a-b", "+a +b"),
    ("x a-b", "+x +a +b"),
    ("a -b", "+a -b"),
    ("-a -b", "-a -b"),
    ("a NOT b", "+a -b"),
    ("\"a b\" c", "+\"a b\" +c"),
    ("f:(a b)", "+f:a +f:b"),
];

const LEADING_WILDCARD: &[(&str, &str)] = &[
    ("*Term", "*term"),
    ("?Term", "?term"),
    ("*", "*"),
    ("f:*", "f:*"),
    ("**", "**"),
    ("*:*", "*:*"),
    ("\\**", "**"),
    ("a *b", "a *b"),
];

const MAX_TWO_CLAUSES: &[(&str, &str)] = &[
    ("one two three", "!too_many_clauses@0"),
    ("one two", "one two"),
    ("(a b c)", "!too_many_clauses@1"),
    ("a (b c)", "a (b c)"),
    ("a OR b OR c", "!too_many_clauses@0"),
    ("x y a-b-c", "!too_many_clauses@0"),
    ("a-b-c", "!too_many_clauses@0"),
    ("+a +b", "+a +b"),
];

const SPLIT_ON_WHITESPACE: &[(&str, &str)] = &[
    ("a b", "a b"),
    ("a-b c", "(a b) c"),
    ("a b AND c", "a +b +c"),
    ("a 3 b", "a b"),
    ("f:a b c", "f:a b c"),
];

const PHRASE_SLOP_THREE: &[(&str, &str)] = &[
    ("\"a b\"", "\"a b\"~3"),
    ("\"a b\"~1", "\"a b\"~1"),
    ("\"a b\"~abc", "\"a b\"~3"),
    ("\"a\"", "a"),
];

/// Every table with its options; the suite below runs them all on each strategy.
fn tables() -> Vec<(ParserOptions, &'static [(&'static str, &'static str)])> {
    vec![
        (ParserOptions::default(), SIMPLE_OR),
        (ParserOptions::default(), ERRORS),
        (with(|o| o.analyzer = Analyzer::Whitespace), WHITESPACE),
        (
            with(|o| o.analyzer = Analyzer::WhitespaceLowercase),
            WHITESPACE_LOWERCASE,
        ),
        (with(|o| o.default_operator = Operator::And), SIMPLE_AND),
        (with(|o| o.allow_leading_wildcard = true), LEADING_WILDCARD),
        (with(|o| o.max_clause_count = 2), MAX_TWO_CLAUSES),
        (with(|o| o.split_on_whitespace = true), SPLIT_ON_WHITESPACE),
        (with(|o| o.phrase_slop = 3), PHRASE_SLOP_THREE),
    ]
}

/// Number of conformance rows (asserted so the table cannot silently shrink).
fn row_count() -> usize {
    tables().iter().map(|(_, rows)| rows.len()).sum()
}

fn check_conformance(make: fn(ParserOptions) -> Box<dyn QueryParser>) {
    for (opts, rows) in tables() {
        run_table(make, opts, rows);
    }
}

fn check_error_messages(p: &dyn QueryParser) {
    let e = p.parse("foo bar)").unwrap_err();
    assert!(
        e.to_string()
            .starts_with("Cannot parse 'foo bar)': Encountered \" \")\" \") \"\" at line 1, column 7.\nWas expecting one of:\n    <EOF> \n    <AND> ...\n"),
        "{e}"
    );
    let e = p.parse("").unwrap_err();
    assert!(
        e.to_string()
            .starts_with("Cannot parse '': Encountered \"<EOF>\" at line 1, column 0."),
        "{e}"
    );
    let e = p.parse("*Term").unwrap_err();
    assert_eq!(
        e.to_string(),
        "Cannot parse '*Term': '*' or '?' not allowed as first character in WildcardQuery"
    );
    let e = p.parse("a~1.5").unwrap_err();
    assert_eq!(
        e.to_string(),
        "Cannot parse 'a~1.5': Fractional edit distances are not allowed!"
    );
    let e = p.parse("XY\\u005G").unwrap_err();
    assert_eq!(
        e.to_string(),
        "Cannot parse 'XY\\u005G': Non-hex character in Unicode escape sequence: G"
    );
    let e = p.parse("\"abc").unwrap_err();
    assert_eq!(
        e.to_string(),
        "Cannot parse '\"abc': Lexical error at line 1, column 5.  Encountered: <EOF> after prefix \"\\\"abc\" (in lexical state 2)"
    );
    let e = p.parse("a^x y").unwrap_err();
    assert_eq!(
        e.to_string(),
        "Cannot parse 'a^x y': Lexical error at line 1, column 3.  Encountered: 'x' (120)"
    );
    assert_eq!(e.column(), 2);
    // A bad last character is reported as end of input, one column further, as JavaCC does.
    let e = p.parse("a ]").unwrap_err();
    assert_eq!(
        e.to_string(),
        "Cannot parse 'a ]': Lexical error at line 1, column 4.  Encountered: <EOF> (in lexical state 2)"
    );
    assert_eq!(e.column(), 2);
    let e = p.parse("\"a").unwrap_err();
    assert_eq!(
        e.to_string(),
        "Cannot parse '\"a': Lexical error at line 1, column 3.  Encountered: <EOF> (in lexical state 2)"
    );
    let opts = with(|o| o.max_clause_count = 2);
    let p2 = p
        .id()
        .parse::<ParserKind>()
        .expect("known strategy")
        .build(opts);
    let e = p2.parse("one two three").unwrap_err();
    assert_eq!(
        e.to_string(),
        "Cannot parse 'one two three': too many boolean clauses"
    );
}

/// `Was expecting` lists copied from Lucene error messages seen in the wild (Elasticsearch and
/// Solr reports quoting `org.apache.lucene.queryparser.classic.ParseException`; Solr's own tokens
/// `<LPARAMS>` and `"filter("` removed), rebuilt with JavaCC's `jj_la1` and rescan rules.
fn check_real_world_messages(p: &dyn QueryParser) {
    fn list(items: &[&str]) -> String {
        let mut m = String::from("Was expecting one of:\n    ");
        for i in items {
            m.push_str(i);
            m.push_str(if *i == "<EOF>" {
                " \n    "
            } else {
                " ...\n    "
            });
        }
        m
    }
    let query_start = [
        "<NOT>",
        "\"+\"",
        "\"-\"",
        "<BAREOPER>",
        "\"(\"",
        "\"*\"",
        "<QUOTED>",
        "<TERM>",
        "<PREFIXTERM>",
        "<WILDTERM>",
        "<REGEXPTERM>",
        "\"[\"",
        "\"{\"",
        "<NUMBER>",
    ];
    let cases: Vec<(&str, String)> = vec![
        (
            "treeish OR",
            format!(
                "Cannot parse 'treeish OR': Encountered \"<EOF>\" at line 1, column 10.\n{}",
                list(&[&query_start[..], &["<TERM>", "\"*\""]].concat())
            ),
        ),
        (
            "AND ada",
            format!(
                "Cannot parse 'AND ada': Encountered \" <AND> \"AND \"\" at line 1, column 0.\n{}",
                list(&[&query_start[..], &["<TERM>"]].concat())
            ),
        ),
        (
            "given-names:Andreas+AND+family-name:Giannakoulopoulos",
            format!(
                "Cannot parse 'given-names:Andreas+AND+family-name:Giannakoulopoulos': Encountered \" \":\" \": \"\" at line 1, column 35.\n{}",
                list(&[
                    "<EOF>",
                    "<AND>",
                    "<OR>",
                    "<NOT>",
                    "\"+\"",
                    "\"-\"",
                    "<BAREOPER>",
                    "\"(\"",
                    "\"*\"",
                    "\"^\"",
                    "<QUOTED>",
                    "<TERM>",
                    "<FUZZY_SLOP>",
                    "<PREFIXTERM>",
                    "<WILDTERM>",
                    "<REGEXPTERM>",
                    "\"[\"",
                    "\"{\"",
                    "<NUMBER>",
                ])
            ),
        ),
        (
            "(lorem:ipsum OR dolor:sit AND _exists_:http_method",
            format!(
                "Cannot parse '(lorem:ipsum OR dolor:sit AND _exists_:http_method': Encountered \"<EOF>\" at line 1, column 50.\n{}",
                list(&[
                    "<AND>",
                    "<OR>",
                    "<NOT>",
                    "\"+\"",
                    "\"-\"",
                    "<BAREOPER>",
                    "\"(\"",
                    "\")\"",
                    "\"*\"",
                    "\"^\"",
                    "<QUOTED>",
                    "<TERM>",
                    "<FUZZY_SLOP>",
                    "<PREFIXTERM>",
                    "<WILDTERM>",
                    "<REGEXPTERM>",
                    "\"[\"",
                    "\"{\"",
                    "<NUMBER>",
                ])
            ),
        ),
    ];
    for (q, want) in cases {
        assert_eq!(
            p.parse(q).unwrap_err().to_string(),
            want,
            "[{}] {q:?}",
            p.id()
        );
    }
    let e = p.parse("tags:!").unwrap_err().to_string();
    assert!(
        e.starts_with("Cannot parse 'tags:!': Encountered \" <NOT> \"! \"\" at line 1, column 5.\nWas expecting one of:\n    <BAREOPER> ...\n"),
        "{e}"
    );
}

fn check_nesting_limit(p: &dyn QueryParser) {
    let deep = format!(
        "{}a{}",
        "(".repeat(parser_base::MAX_DEPTH),
        ")".repeat(parser_base::MAX_DEPTH)
    );
    assert_eq!(
        p.parse(&deep).map(|q| q.to_string_field("field")),
        Ok("a".to_string())
    );
    let too_deep = format!(
        "{}a{}",
        "(".repeat(parser_base::MAX_DEPTH + 1),
        ")".repeat(parser_base::MAX_DEPTH + 1)
    );
    assert_eq!(p.parse(&too_deep).unwrap_err().class(), ErrorClass::Runtime);
    let unclosed = "(".repeat(10_000);
    assert!(p.parse(&unclosed).is_err());
}

fn check_trees_not_strings(p: &dyn QueryParser) {
    // `a\*` (a term) and `a*` (a prefix) print the same but are different queries.
    let opts = with(|o| o.analyzer = Analyzer::Whitespace);
    let p = p
        .id()
        .parse::<ParserKind>()
        .expect("known strategy")
        .build(opts);
    let term = p.parse("a\\*").expect("parses");
    let prefix = p.parse("a*").expect("parses");
    assert_eq!(
        term.to_string_field("field"),
        prefix.to_string_field("field")
    );
    assert_ne!(term, prefix);
    assert!(matches!(prefix, Query::Prefix { .. }));
}

fn check_into_owned(p: &dyn QueryParser) {
    let owned = {
        let text = String::from("f\\:x:(a b) +title:\"c d\"^2");
        p.parse(&text).expect("parses").into_owned()
    };
    assert_eq!(
        owned.to_string_field("field"),
        "(f:x:a f:x:b) +(title:\"c d\")^2.0"
    );
    assert_eq!(
        owned,
        p.parse("f\\:x:(a b) +title:\"c d\"^2").expect("parses")
    );
}

#[test]
fn conformance_table_has_at_least_200_rows() {
    assert!(row_count() >= 200, "only {} rows", row_count());
}

/// One module per strategy, each running every check above.
macro_rules! conformance {
    ($name:ident, $parser:ident) => {
        mod $name {
            use super::*;

            fn make(o: ParserOptions) -> Box<dyn QueryParser> {
                Box::new($parser::new(o))
            }

            #[test]
            fn conformance() {
                check_conformance(make);
            }

            #[test]
            fn error_messages() {
                check_error_messages(make(ParserOptions::default()).as_ref());
            }

            #[test]
            fn real_world_messages() {
                check_real_world_messages(make(ParserOptions::default()).as_ref());
            }

            #[test]
            fn nesting_limit() {
                check_nesting_limit(make(ParserOptions::default()).as_ref());
            }

            #[test]
            fn trees_not_strings() {
                check_trees_not_strings(make(ParserOptions::default()).as_ref());
            }

            #[test]
            fn into_owned() {
                check_into_owned(make(ParserOptions::default()).as_ref());
            }
        }
    };
}

conformance!(backtracking, BacktrackingParser);
conformance!(predictive, PredictiveParser);

/// Property tests: the strategies agree everywhere, renderings re-parse to the same tree, and no
/// input makes either strategy panic.
mod properties {
    use super::*;
    use proptest::prelude::*;

    /// Fragments that exercise every token kind, lexical state and error class when joined.
    const FRAGMENTS: &[&str] = &[
        "a", "b", "Term", "x1", "AND", "OR", "NOT", "&&", "||", "!", "+", "-", "(", ")", ":", "f:",
        "*", "?", "~", "~2", "~0.5", "^", "^2", "^0.5", "\"", "\"a b\"", "\"x\"", "[", "]", "{",
        "}", "TO", "/", "/x/", "\\", "\\u0041", "\\u00", "\\ ", "a*", "te?m", "*a", "[a TO b]",
        "{* TO c]", "\u{3000}", "é", "1", "a-b", "*:*", "\t", "\n",
    ];

    fn fragment_query() -> impl Strategy<Value = String> {
        prop::collection::vec((prop::sample::select(FRAGMENTS), prop::bool::ANY), 0..12).prop_map(
            |parts| {
                let mut s = String::new();
                for (frag, space) in parts {
                    s.push_str(frag);
                    if space {
                        s.push(' ');
                    }
                }
                s
            },
        )
    }

    fn all_options() -> impl Strategy<Value = ParserOptions> {
        (
            prop::sample::select(Analyzer::ALL.to_vec()),
            prop::bool::ANY,
            prop::bool::ANY,
            prop::bool::ANY,
            prop::sample::select(vec![2usize, 1024]),
        )
            .prop_map(|(analyzer, and, leading, split, max)| ParserOptions {
                analyzer,
                default_operator: if and { Operator::And } else { Operator::Or },
                allow_leading_wildcard: leading,
                split_on_whitespace: split,
                max_clause_count: max,
                ..ParserOptions::default()
            })
    }

    /// A generator of "simple" queries: lowercase words, fields, phrases, prefixes, fuzzy terms,
    /// ranges, modifiers, conjunctions, groups and boosts, but nothing the analyzer drops.
    fn simple_query() -> impl Strategy<Value = String> {
        let word = "[a-z]{1,6}";
        let leaf = prop_oneof![
            word.prop_map(|w| w.to_string()),
            (word, word).prop_map(|(f, w)| format!("{f}:{w}")),
            (word, word, 0..3u8).prop_map(|(a, b, s)| format!("\"{a} {b}\"~{s}")),
            word.prop_map(|w| format!("{w}*")),
            (word, 0..3u8).prop_map(|(w, e)| format!("{w}~{e}")),
            (word, word).prop_map(|(a, b)| format!("[{a} TO {b}}}")),
            (word, 1..20u8).prop_map(|(w, b)| format!("{w}^{b}")),
            Just("*:*".to_string()),
        ];
        leaf.prop_recursive(3, 24, 4, |inner| {
            prop::collection::vec(
                (
                    prop::sample::select(vec!["", "+", "-", "NOT "]),
                    prop::sample::select(vec![" ", " AND ", " OR "]),
                    inner,
                ),
                1..4,
            )
            .prop_map(|clauses| {
                let mut s = String::from("(");
                for (i, (m, conj, q)) in clauses.into_iter().enumerate() {
                    if i > 0 {
                        s.push_str(conj);
                    }
                    s.push_str(m);
                    s.push_str(&q);
                }
                s.push(')');
                s
            })
        })
    }

    fn agree(opts: ParserOptions, q: &str) -> Result<(), TestCaseError> {
        let (bp, pp) = (
            BacktrackingParser::new(opts.clone()),
            PredictiveParser::new(opts),
        );
        let b = bp.parse(q);
        let p = pp.parse(q);
        match (&b, &p) {
            (Ok(x), Ok(y)) => prop_assert_eq!(x, y, "{:?}", q),
            (Err(x), Err(y)) => {
                prop_assert_eq!(x.class(), y.class(), "{:?}: {} / {}", q, x, y);
                prop_assert_eq!(x.column(), y.column(), "{:?}: {} / {}", q, x, y);
                prop_assert_eq!(x.to_string(), y.to_string());
            }
            _ => prop_assert!(false, "{:?}: backtracking {:?} vs predictive {:?}", q, b, p),
        }
        Ok(())
    }

    proptest! {
        // 512 cases by default; PROPTEST_CASES raises it for a longer run.
        #![proptest_config(ProptestConfig::with_cases(
            std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(512)
        ))]

        /// Both strategies give equal trees, or errors of the same class, column and message.
        #[test]
        fn strategies_agree_on_fragment_soup(q in fragment_query(), opts in all_options()) {
            agree(opts, &q)?;
        }

        /// The same on well-formed queries, which mostly succeed.
        #[test]
        fn strategies_agree_on_simple_queries(q in simple_query(), opts in all_options()) {
            agree(opts, &q)?;
        }

        /// Parsing what the renderer printed gives back the same tree.
        #[test]
        fn rendering_reparses_to_the_same_tree(q in simple_query()) {
            for p in [&PredictiveParser::new(ParserOptions::default()) as &dyn QueryParser,
                      &BacktrackingParser::new(ParserOptions::default())] {
                let tree = p.parse(&q).map_err(|e| TestCaseError::fail(format!("{q:?}: {e}")))?;
                let text = tree.to_string_field("field");
                if tree == Query::empty() {
                    continue;
                }
                let again = p.parse(&text).map_err(|e| TestCaseError::fail(format!("{q:?} -> {text:?}: {e}")))?;
                prop_assert_eq!(&again, &tree, "{:?} -> {:?}", q, text);
            }
        }

        /// Arbitrary bytes (as lossy UTF-8) never panic either strategy, and they agree.
        #[test]
        fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..64)) {
            let q = String::from_utf8_lossy(&bytes);
            agree(ParserOptions::default(), &q)?;
        }

        /// Arbitrary strings over the syntax's special characters never panic, and they agree.
        #[test]
        fn special_character_strings_never_panic(q in "[ -~\u{3000}\u{e9}\u{1F600}\t\n]{0,40}") {
            agree(ParserOptions::default(), &q)?;
        }
    }
}

/// tantivy's query grammar as a peer (research file, section 8). It is not a conformance peer
/// (no fuzzy, wildcard or prefix terms, no `&& || !`, real precedence, other escapes), so it only
/// runs rows written in the syntax both languages share, and must accept each of them with as
/// many leaf queries as our tree has.
mod tantivy_peer {
    use super::*;
    use tantivy_query_grammar::{UserInputAst, UserInputLeaf, parse_query};

    const SHARED: &[&str] = &[
        "a",
        "title:lucene",
        "\"a b\"",
        "\"a b\"~2",
        "f:\"a b c\"",
        "+a -b",
        "a AND b",
        "a OR b",
        "a b c",
        "+title:java -body:python",
        "title:(lucene OR solr)",
        "(a OR b) AND (c OR d)",
        "a^2",
        "title:jdwp^3 body:debugger",
        "(a b)^2",
        "[a TO b]",
        "{a TO b]",
        "f:[1 TO 10}",
        "date:[2020 TO *]",
        "/ab.c/",
        "((a OR b) AND NOT c) OR d",
        "+(title:dog title:cat) -author:\"bob dole\"",
        "(title:(lucene OR solr)^2 AND body:\"query parser\"~2) OR (author:smith -status:deleted)",
    ];

    fn leaves(q: &Query<'_>) -> usize {
        match q {
            Query::Boolean(clauses) => clauses.iter().map(|c| leaves(&c.query)).sum(),
            Query::Boost { query, .. } => leaves(query),
            _ => 1,
        }
    }

    fn tantivy_leaves(ast: &UserInputAst) -> usize {
        match ast {
            UserInputAst::Clause(clauses) => clauses.iter().map(|(_, a)| tantivy_leaves(a)).sum(),
            UserInputAst::Boost(inner, _) => tantivy_leaves(inner),
            UserInputAst::Leaf(leaf) => match **leaf {
                UserInputLeaf::Set { ref elements, .. } => elements.len(),
                _ => 1,
            },
        }
    }

    fn check_shared_syntax(p: &dyn QueryParser) {
        for q in SHARED {
            let ours = p.parse(q).unwrap_or_else(|e| panic!("{q:?}: {e}"));
            let peer = parse_query(q).unwrap_or_else(|_| panic!("tantivy rejects {q:?}"));
            assert_eq!(
                tantivy_leaves(&peer),
                leaves(&ours),
                "{q:?}: {peer:?} vs {ours:?}"
            );
        }
    }

    #[test]
    fn shared_syntax_means_the_same_leaves() {
        let opts = with(|o| o.analyzer = Analyzer::WhitespaceLowercase);
        check_shared_syntax(&PredictiveParser::new(opts.clone()));
        check_shared_syntax(&BacktrackingParser::new(opts));
    }

    /// Where the grammars part ways (research file, section 8), tantivy reads other queries.
    #[test]
    fn known_differences() {
        // `&&` is a word for tantivy; `*:*` and quoted range endpoints are rejected.
        assert!(parse_query("a && b").is_ok_and(|ast| tantivy_leaves(&ast) == 3));
        assert!(parse_query("*:*").is_err());
        assert!(parse_query("[\"a\" TO \"b\"]").is_err());
    }
}

/// Fuzz finding (`+\n*`, leading wildcards on): when the first clause is analyzed away, Lucene's
/// `Query` production has no `firstQuery` and builds a boolean of the one remaining SHOULD
/// clause, which `toString` prints exactly like that clause. Both strategies keep that shape;
/// the fuzz target does not expect such a rendering to parse back to the same tree.
#[test]
fn a_first_clause_analyzed_away_leaves_a_boolean_of_one_clause() {
    let makes: [fn(ParserOptions) -> Box<dyn QueryParser>; 2] = [
        |o| Box::new(BacktrackingParser::new(o)),
        |o| Box::new(PredictiveParser::new(o)),
    ];
    for make in makes {
        let p = make(ParserOptions::default());
        let tree = p.parse("3 b").expect("parses");
        let clause = BooleanClause {
            occur: Occur::Should,
            query: Query::Term {
                field: "field".into(),
                text: "b".into(),
            },
        };
        assert_eq!(tree, Query::Boolean(vec![clause.clone()]), "[{}]", p.id());
        assert_eq!(tree.to_string_field("field"), "b");
        assert_eq!(p.parse("b").expect("parses"), clause.query);
    }
}

/// Throws per successful parse over this suite's rows, the analogue of the facts file's corpus
/// figures (Lucene 8.8.1 over the 588 `equals` rows of the research's case list: 0.243
/// `LookaheadSuccess`, histogram 0:459 1:116 2:12 3:1, and 1.735 `IOException`). That list is
/// not in this repository; these 267 rows overlap it but are not the same set, so the figures
/// differ a little (0.296 and 1.775). Pinned, so that a change to the mechanism shows; update
/// the totals when rows are added.
#[test]
fn throws_per_parse_over_the_conformance_rows() {
    let (mut parses, mut successes, mut reads) = (0, 0, 0);
    let mut histogram = [0; 4];
    for (opts, rows) in tables() {
        let p = BacktrackingParser::new(opts);
        for (input, expected) in rows.iter().filter(|(_, e)| !e.starts_with('!')) {
            let (r, stats) = p.parse_with_stats(input);
            assert!(r.is_ok(), "{input:?} should render as {expected:?}");
            parses += 1;
            successes += stats.successes;
            reads += stats.read_past_eof;
            histogram[(stats.successes as usize).min(3)] += 1;
        }
    }
    assert_eq!((parses, successes, reads), (267, 79, 474));
    assert_eq!(histogram, [199, 58, 9, 1]);
}
