//! The query corpus: four classes, every query with the result Lucene gives for it.
//!
//! Expected renderings are `Query.toString("field")` under [`options`] (the `whitespace-lowercase`
//! analyzer, Lucene's `new MockAnalyzer(random())`); they were produced by this crate's parser and
//! checked by hand against the rules of the research file, and the conformance suite in
//! `critsec_parser` pins the rules themselves. `shared` marks the queries that mean the same
//! in tantivy's grammar (research file, section 8: no fuzzy, wildcard, prefix, `&& || !`, errors;
//! and no mix of `AND` with `OR` or `AND NOT`, where tantivy's precedence and its unary `NOT`
//! build other trees); setup checks each one node by node ([`crate::peer::means_the_same`]).

use critsec_harness::Choice;
use critsec_parser::{Analyzer, ErrorClass, ParserOptions};

/// A query class, the `class` parameter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    /// One bare term (`xyz`): the seed's "simple q=xyz".
    Simple,
    /// Fields, phrases, boosts, one conjunction.
    Medium,
    /// Nested groups, ranges, fuzzy and wildcard terms; 100+ bytes each.
    Complex,
    /// Flat boolean lists of 40 to 200 clauses.
    Long,
}

impl Choice for Class {
    const ALL: &'static [Self] = &[Class::Simple, Class::Medium, Class::Complex, Class::Long];
    fn id(self) -> &'static str {
        match self {
            Class::Simple => "simple",
            Class::Medium => "medium",
            Class::Complex => "complex",
            Class::Long => "long",
        }
    }
}

/// What parsing a query must give.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expect {
    /// Success, rendering as this text.
    Renders(&'static str),
    /// Failure of this class.
    Fails(ErrorClass),
}

/// One corpus query.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry {
    /// Its class.
    pub class: Class,
    /// Whether it means the same in tantivy's grammar (and so is part of the peer subset).
    pub shared: bool,
    /// The query text.
    pub query: &'static str,
    /// The expected result.
    pub expect: Expect,
}

/// The parser options the expectations hold for.
pub fn options() -> ParserOptions {
    ParserOptions {
        analyzer: Analyzer::WhitespaceLowercase,
        ..ParserOptions::default()
    }
}

/// The queries of `class`; only the shared subset when `shared_only`.
pub fn entries(class: Class, shared_only: bool) -> Vec<Entry> {
    CORPUS
        .iter()
        .filter(|e| e.class == class && (e.shared || !shared_only))
        .copied()
        .collect()
}

/// The whole corpus.
#[rustfmt::skip]
pub const CORPUS: &[Entry] = &[
    Entry { class: Class::Simple, shared: true, query: r##"xyz"##, expect: Expect::Renders(r##"xyz"##) },
    Entry { class: Class::Simple, shared: true, query: r##"lucene"##, expect: Expect::Renders(r##"lucene"##) },
    Entry { class: Class::Simple, shared: true, query: r##"solr"##, expect: Expect::Renders(r##"solr"##) },
    Entry { class: Class::Simple, shared: true, query: r##"apache"##, expect: Expect::Renders(r##"apache"##) },
    Entry { class: Class::Simple, shared: true, query: r##"search"##, expect: Expect::Renders(r##"search"##) },
    Entry { class: Class::Simple, shared: true, query: r##"query"##, expect: Expect::Renders(r##"query"##) },
    Entry { class: Class::Simple, shared: true, query: r##"parser"##, expect: Expect::Renders(r##"parser"##) },
    Entry { class: Class::Simple, shared: true, query: r##"ipod"##, expect: Expect::Renders(r##"ipod"##) },
    Entry { class: Class::Simple, shared: true, query: r##"laptop"##, expect: Expect::Renders(r##"laptop"##) },
    Entry { class: Class::Simple, shared: true, query: r##"camera"##, expect: Expect::Renders(r##"camera"##) },
    Entry { class: Class::Simple, shared: true, query: r##"london"##, expect: Expect::Renders(r##"london"##) },
    Entry { class: Class::Simple, shared: true, query: r##"python"##, expect: Expect::Renders(r##"python"##) },
    Entry { class: Class::Simple, shared: true, query: r##"java"##, expect: Expect::Renders(r##"java"##) },
    Entry { class: Class::Simple, shared: true, query: r##"hadoop"##, expect: Expect::Renders(r##"hadoop"##) },
    Entry { class: Class::Simple, shared: true, query: r##"kafka"##, expect: Expect::Renders(r##"kafka"##) },
    Entry { class: Class::Simple, shared: true, query: r##"elasticsearch"##, expect: Expect::Renders(r##"elasticsearch"##) },
    Entry { class: Class::Medium, shared: true, query: r##"title:lucene"##, expect: Expect::Renders(r##"title:lucene"##) },
    Entry { class: Class::Medium, shared: true, query: r##"title:"query parser""##, expect: Expect::Renders(r##"title:"query parser""##) },
    Entry { class: Class::Medium, shared: true, query: r##"body:search^2"##, expect: Expect::Renders(r##"(body:search)^2.0"##) },
    Entry { class: Class::Medium, shared: true, query: r##"title:solr AND body:lucene"##, expect: Expect::Renders(r##"+title:solr +body:lucene"##) },
    Entry { class: Class::Medium, shared: true, query: r##""apache lucene"~3"##, expect: Expect::Renders(r##""apache lucene"~3"##) },
    Entry { class: Class::Medium, shared: true, query: r##"+title:java -body:python"##, expect: Expect::Renders(r##"+title:java -body:python"##) },
    Entry { class: Class::Medium, shared: true, query: r##"author:smith^1.5 title:parser"##, expect: Expect::Renders(r##"(author:smith)^1.5 title:parser"##) },
    Entry { class: Class::Medium, shared: true, query: r##"title:(lucene OR solr)"##, expect: Expect::Renders(r##"title:lucene title:solr"##) },
    Entry { class: Class::Medium, shared: true, query: r##"category:books AND price:[10 TO 20]"##, expect: Expect::Renders(r##"+category:books +price:[10 TO 20]"##) },
    Entry { class: Class::Medium, shared: true, query: r##""hot path" performance"##, expect: Expect::Renders(r##""hot path" performance"##) },
    Entry { class: Class::Medium, shared: true, query: r##"name:"john smith"^2 role:admin"##, expect: Expect::Renders(r##"(name:"john smith")^2.0 role:admin"##) },
    Entry { class: Class::Medium, shared: true, query: r##"-status:deleted +type:article"##, expect: Expect::Renders(r##"-status:deleted +type:article"##) },
    Entry { class: Class::Medium, shared: true, query: r##"title:jdwp^3 body:debugger"##, expect: Expect::Renders(r##"(title:jdwp)^3.0 body:debugger"##) },
    Entry { class: Class::Medium, shared: true, query: r##"brand:apple AND product:ipod"##, expect: Expect::Renders(r##"+brand:apple +product:ipod"##) },
    Entry { class: Class::Medium, shared: true, query: r##""new york" OR "los angeles""##, expect: Expect::Renders(r##""new york" "los angeles""##) },
    Entry { class: Class::Medium, shared: true, query: r##"tag:rust tag:java tag:go"##, expect: Expect::Renders(r##"tag:rust tag:java tag:go"##) },
    Entry { class: Class::Medium, shared: false, query: r##"title:luc* body:search"##, expect: Expect::Renders(r##"title:luc* body:search"##) },
    Entry { class: Class::Medium, shared: false, query: r##"name:smith~1 AND city:london"##, expect: Expect::Renders(r##"+name:smith~1 +city:london"##) },
    Entry { class: Class::Medium, shared: false, query: r##"title:lucene && body:solr"##, expect: Expect::Renders(r##"+title:lucene +body:solr"##) },
    Entry { class: Class::Medium, shared: false, query: r##"title:"##, expect: Expect::Fails(ErrorClass::Syntax) },
    Entry { class: Class::Medium, shared: false, query: r##""unterminated phrase"##, expect: Expect::Fails(ErrorClass::Lexical) },
    Entry { class: Class::Complex, shared: false, query: r##"(title:(lucene OR solr)^2 AND body:"query parser"~2) OR (author:smith -status:deleted) AND date:[20100101 TO 20101231]"##, expect: Expect::Renders(r##"(+(title:lucene title:solr)^2.0 +body:"query parser"~2) +(author:smith -status:deleted) +date:[20100101 TO 20101231]"##) },
    Entry { class: Class::Complex, shared: true, query: r##"+(category:electronics OR category:computers) +(brand:apple OR brand:dell OR brand:lenovo) -refurbished:true price:{100 TO 2000]"##, expect: Expect::Renders(r##"+(category:electronics category:computers) +(brand:apple brand:dell brand:lenovo) -refurbished:true price:{100 TO 2000]"##) },
    Entry { class: Class::Complex, shared: false, query: r##"((title:"java performance" OR title:"jvm tuning")^3 body:(debugger OR jdwp OR agent)) AND year:[2008 TO 2012] -tag:spam"##, expect: Expect::Renders(r##"+((title:"java performance" title:"jvm tuning")^3.0 (body:debugger body:jdwp body:agent)) +year:[2008 TO 2012] -tag:spam"##) },
    Entry { class: Class::Complex, shared: true, query: r##"title:(search OR retrieval)^1.5 AND (body:"inverted index" OR body:"posting list"~4) AND -(status:draft OR status:deleted) AND date:[2020 TO *]"##, expect: Expect::Renders(r##"+(title:search title:retrieval)^1.5 +(body:"inverted index" body:"posting list"~4) -(status:draft status:deleted) +date:[2020 TO *]"##) },
    Entry { class: Class::Complex, shared: true, query: r##"(+author:(knuth OR dijkstra) +subject:(algorithms OR "formal methods")) OR (editor:hoare AND year:{1960 TO 1980}) OR isbn:9780201896831"##, expect: Expect::Renders(r##"(+(author:knuth author:dijkstra) +(subject:algorithms subject:"formal methods")) (+editor:hoare +year:{1960 TO 1980}) isbn:9780201896831"##) },
    Entry { class: Class::Complex, shared: false, query: r##"(a:(b OR (c AND (d OR e)))^2 OR f:"g h"~3) AND NOT (i:j OR k:[l TO m}) AND (n OR o OR p) AND q:(r OR (s AND t))^4"##, expect: Expect::Renders(r##"+((a:b (+a:c +(a:d a:e)))^2.0 f:"g h"~3) -(i:j k:[l TO m}) +(n o p) +(q:r (+q:s +q:t))^4.0"##) },
    Entry { class: Class::Complex, shared: false, query: r##"(title:luc* OR title:sol?r)^2 AND (author:smyth~1 OR author:jonson~2) AND body:(index* AND search*) -date:[* TO 2000]"##, expect: Expect::Renders(r##"+(title:luc* title:sol?r)^2.0 +(author:smyth~1 author:jonson~2) +(+body:index* +body:search*) -date:[* TO 2000]"##) },
    Entry { class: Class::Complex, shared: false, query: r##"+(name:jo?n* OR name:jon~1) +(city:"new york" OR city:boston^2) -(status:banned OR status:suspended) AND created:{2019 TO 2021}"##, expect: Expect::Renders(r##"+(name:jo?n* name:jon~1) +(city:"new york" (city:boston)^2.0) -(status:banned status:suspended) +created:{2019 TO 2021}"##) },
    Entry { class: Class::Complex, shared: false, query: r##"((a* OR b?c) AND (d~ OR "e f"~2)^3) OR (g:[h TO i] AND NOT j:k*) OR /reg.*exp/ OR l:m~0.5 OR "n o p"~1^2 OR q:r*"##, expect: Expect::Renders(r##"(+(a* b?c) +(d~2 "e f"~2)^3.0) (+g:[h TO i] -j:k*) /reg.*exp/ l:m~0 ("n o p"~1)^2.0 q:r*"##) },
    Entry { class: Class::Complex, shared: false, query: r##"(title:(lucene OR solr)^2 AND body:"query parser"~2) OR (author:smith -status:deleted AND date:[2010 TO 2011]"##, expect: Expect::Fails(ErrorClass::Syntax) },
    Entry { class: Class::Long, shared: true, query: r##"id:0 id:1 id:2 id:3 id:4 id:5 id:6 id:7 id:8 id:9 id:10 id:11 id:12 id:13 id:14 id:15 id:16 id:17 id:18 id:19 id:20 id:21 id:22 id:23 id:24 id:25 id:26 id:27 id:28 id:29 id:30 id:31 id:32 id:33 id:34 id:35 id:36 id:37 id:38 id:39 id:40 id:41 id:42 id:43 id:44 id:45 id:46 id:47 id:48 id:49 id:50 id:51 id:52 id:53 id:54 id:55 id:56 id:57 id:58 id:59 id:60 id:61 id:62 id:63 id:64 id:65 id:66 id:67 id:68 id:69 id:70 id:71 id:72 id:73 id:74 id:75 id:76 id:77 id:78 id:79 id:80 id:81 id:82 id:83 id:84 id:85 id:86 id:87 id:88 id:89 id:90 id:91 id:92 id:93 id:94 id:95 id:96 id:97 id:98 id:99"##, expect: Expect::Renders(r##"id:0 id:1 id:2 id:3 id:4 id:5 id:6 id:7 id:8 id:9 id:10 id:11 id:12 id:13 id:14 id:15 id:16 id:17 id:18 id:19 id:20 id:21 id:22 id:23 id:24 id:25 id:26 id:27 id:28 id:29 id:30 id:31 id:32 id:33 id:34 id:35 id:36 id:37 id:38 id:39 id:40 id:41 id:42 id:43 id:44 id:45 id:46 id:47 id:48 id:49 id:50 id:51 id:52 id:53 id:54 id:55 id:56 id:57 id:58 id:59 id:60 id:61 id:62 id:63 id:64 id:65 id:66 id:67 id:68 id:69 id:70 id:71 id:72 id:73 id:74 id:75 id:76 id:77 id:78 id:79 id:80 id:81 id:82 id:83 id:84 id:85 id:86 id:87 id:88 id:89 id:90 id:91 id:92 id:93 id:94 id:95 id:96 id:97 id:98 id:99"##) },
    Entry { class: Class::Long, shared: true, query: r##"w0 OR w1 OR w2 OR w3 OR w4 OR w5 OR w6 OR w7 OR w8 OR w9 OR w10 OR w11 OR w12 OR w13 OR w14 OR w15 OR w16 OR w17 OR w18 OR w19 OR w20 OR w21 OR w22 OR w23 OR w24 OR w25 OR w26 OR w27 OR w28 OR w29 OR w30 OR w31 OR w32 OR w33 OR w34 OR w35 OR w36 OR w37 OR w38 OR w39 OR w40 OR w41 OR w42 OR w43 OR w44 OR w45 OR w46 OR w47 OR w48 OR w49 OR w50 OR w51 OR w52 OR w53 OR w54 OR w55 OR w56 OR w57 OR w58 OR w59 OR w60 OR w61 OR w62 OR w63 OR w64 OR w65 OR w66 OR w67 OR w68 OR w69 OR w70 OR w71 OR w72 OR w73 OR w74 OR w75 OR w76 OR w77 OR w78 OR w79"##, expect: Expect::Renders(r##"w0 w1 w2 w3 w4 w5 w6 w7 w8 w9 w10 w11 w12 w13 w14 w15 w16 w17 w18 w19 w20 w21 w22 w23 w24 w25 w26 w27 w28 w29 w30 w31 w32 w33 w34 w35 w36 w37 w38 w39 w40 w41 w42 w43 w44 w45 w46 w47 w48 w49 w50 w51 w52 w53 w54 w55 w56 w57 w58 w59 w60 w61 w62 w63 w64 w65 w66 w67 w68 w69 w70 w71 w72 w73 w74 w75 w76 w77 w78 w79"##) },
    Entry { class: Class::Long, shared: true, query: r##"+a0 +a1 +a2 +a3 +a4 +a5 +a6 +a7 +a8 +a9 +a10 +a11 +a12 +a13 +a14 +a15 +a16 +a17 +a18 +a19 +a20 +a21 +a22 +a23 +a24 +a25 +a26 +a27 +a28 +a29 +a30 +a31 +a32 +a33 +a34 +a35 +a36 +a37 +a38 +a39 +a40 +a41 +a42 +a43 +a44 +a45 +a46 +a47 +a48 +a49 +a50 +a51 +a52 +a53 +a54 +a55 +a56 +a57 +a58 +a59"##, expect: Expect::Renders(r##"+a0 +a1 +a2 +a3 +a4 +a5 +a6 +a7 +a8 +a9 +a10 +a11 +a12 +a13 +a14 +a15 +a16 +a17 +a18 +a19 +a20 +a21 +a22 +a23 +a24 +a25 +a26 +a27 +a28 +a29 +a30 +a31 +a32 +a33 +a34 +a35 +a36 +a37 +a38 +a39 +a40 +a41 +a42 +a43 +a44 +a45 +a46 +a47 +a48 +a49 +a50 +a51 +a52 +a53 +a54 +a55 +a56 +a57 +a58 +a59"##) },
    Entry { class: Class::Long, shared: true, query: r##"x0 x1 x2 x3 x4 x5 x6 x7 x8 x9 x10 x11 x12 x13 x14 x15 x16 x17 x18 x19 x20 x21 x22 x23 x24 x25 x26 x27 x28 x29 x30 x31 x32 x33 x34 x35 x36 x37 x38 x39 x40 x41 x42 x43 x44 x45 x46 x47 x48 x49 x50 x51 x52 x53 x54 x55 x56 x57 x58 x59 x60 x61 x62 x63 x64 x65 x66 x67 x68 x69 x70 x71 x72 x73 x74 x75 x76 x77 x78 x79 x80 x81 x82 x83 x84 x85 x86 x87 x88 x89 x90 x91 x92 x93 x94 x95 x96 x97 x98 x99 x100 x101 x102 x103 x104 x105 x106 x107 x108 x109 x110 x111 x112 x113 x114 x115 x116 x117 x118 x119 x120 x121 x122 x123 x124 x125 x126 x127 x128 x129 x130 x131 x132 x133 x134 x135 x136 x137 x138 x139 x140 x141 x142 x143 x144 x145 x146 x147 x148 x149 x150 x151 x152 x153 x154 x155 x156 x157 x158 x159 x160 x161 x162 x163 x164 x165 x166 x167 x168 x169 x170 x171 x172 x173 x174 x175 x176 x177 x178 x179 x180 x181 x182 x183 x184 x185 x186 x187 x188 x189 x190 x191 x192 x193 x194 x195 x196 x197 x198 x199"##, expect: Expect::Renders(r##"x0 x1 x2 x3 x4 x5 x6 x7 x8 x9 x10 x11 x12 x13 x14 x15 x16 x17 x18 x19 x20 x21 x22 x23 x24 x25 x26 x27 x28 x29 x30 x31 x32 x33 x34 x35 x36 x37 x38 x39 x40 x41 x42 x43 x44 x45 x46 x47 x48 x49 x50 x51 x52 x53 x54 x55 x56 x57 x58 x59 x60 x61 x62 x63 x64 x65 x66 x67 x68 x69 x70 x71 x72 x73 x74 x75 x76 x77 x78 x79 x80 x81 x82 x83 x84 x85 x86 x87 x88 x89 x90 x91 x92 x93 x94 x95 x96 x97 x98 x99 x100 x101 x102 x103 x104 x105 x106 x107 x108 x109 x110 x111 x112 x113 x114 x115 x116 x117 x118 x119 x120 x121 x122 x123 x124 x125 x126 x127 x128 x129 x130 x131 x132 x133 x134 x135 x136 x137 x138 x139 x140 x141 x142 x143 x144 x145 x146 x147 x148 x149 x150 x151 x152 x153 x154 x155 x156 x157 x158 x159 x160 x161 x162 x163 x164 x165 x166 x167 x168 x169 x170 x171 x172 x173 x174 x175 x176 x177 x178 x179 x180 x181 x182 x183 x184 x185 x186 x187 x188 x189 x190 x191 x192 x193 x194 x195 x196 x197 x198 x199"##) },
    Entry { class: Class::Long, shared: true, query: r##""p0 q0" OR "p1 q1" OR "p2 q2" OR "p3 q3" OR "p4 q4" OR "p5 q5" OR "p6 q6" OR "p7 q7" OR "p8 q8" OR "p9 q9" OR "p10 q10" OR "p11 q11" OR "p12 q12" OR "p13 q13" OR "p14 q14" OR "p15 q15" OR "p16 q16" OR "p17 q17" OR "p18 q18" OR "p19 q19" OR "p20 q20" OR "p21 q21" OR "p22 q22" OR "p23 q23" OR "p24 q24" OR "p25 q25" OR "p26 q26" OR "p27 q27" OR "p28 q28" OR "p29 q29" OR "p30 q30" OR "p31 q31" OR "p32 q32" OR "p33 q33" OR "p34 q34" OR "p35 q35" OR "p36 q36" OR "p37 q37" OR "p38 q38" OR "p39 q39""##, expect: Expect::Renders(r##""p0 q0" "p1 q1" "p2 q2" "p3 q3" "p4 q4" "p5 q5" "p6 q6" "p7 q7" "p8 q8" "p9 q9" "p10 q10" "p11 q11" "p12 q12" "p13 q13" "p14 q14" "p15 q15" "p16 q16" "p17 q17" "p18 q18" "p19 q19" "p20 q20" "p21 q21" "p22 q22" "p23 q23" "p24 q24" "p25 q25" "p26 q26" "p27 q27" "p28 q28" "p29 q29" "p30 q30" "p31 q31" "p32 q32" "p33 q33" "p34 q34" "p35 q35" "p36 q36" "p37 q37" "p38 q38" "p39 q39""##) },
];
