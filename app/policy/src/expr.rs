//! Approval conditions: a deliberately small expression language.
//!
//! ```text
//! args.amount > 5000
//! context.page_sensitive == true and not (args.url == "about:blank")
//! len(args.paths) > 10 or args.force == true
//! ```
//!
//! Operands: `args.<field>…`, `context.<field>…`, `len(<path>)`, numbers, "strings",
//! `true`, `false`, `null`. Operators: `== != < <= > >=`, `and`/`&&`, `or`/`||`,
//! `not`/`!`, parentheses. A path that is absent evaluates to `null`; an ordering
//! comparison with anything that is not two numbers (or two strings) is false. A bare
//! operand is true only when it is the boolean `true`.
//!
//! Parsed once at load; evaluation walks a small tree and never allocates.

use serde_json::Value;
use std::fmt;

#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    Or(Box<Expr>, Box<Expr>),
    And(Box<Expr>, Box<Expr>),
    Not(Box<Expr>),
    Cmp(Operand, CmpOp, Operand),
    Truthy(Operand),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CmpOp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

#[derive(Debug, Clone, PartialEq, Eq, Copy)]
pub enum Root {
    Args,
    Context,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Operand {
    Path(Root, Vec<String>),
    Len(Root, Vec<String>),
    Literal(Value),
}

/// A condition that could not be parsed, with the byte offset where it went wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExprError {
    pub offset: usize,
    pub message: String,
}

impl fmt::Display for ExprError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "at column {}: {}", self.offset + 1, self.message)
    }
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Ident(String),
    Num(f64),
    Str(String),
    Op(&'static str),
    LParen,
    RParen,
    Dot,
}

fn lex(src: &str) -> Result<Vec<(usize, Tok)>, ExprError> {
    let b = src.as_bytes();
    let mut i = 0;
    let mut out = Vec::new();
    let err = |offset, m: &str| ExprError {
        offset,
        message: m.to_string(),
    };
    while i < b.len() {
        let c = b[i];
        let start = i;
        match c {
            b' ' | b'\t' | b'\n' | b'\r' => i += 1,
            b'(' => {
                out.push((start, Tok::LParen));
                i += 1
            }
            b')' => {
                out.push((start, Tok::RParen));
                i += 1
            }
            b'.' => {
                out.push((start, Tok::Dot));
                i += 1
            }
            b'=' | b'!' | b'<' | b'>' | b'&' | b'|' => {
                let (op, len) = match src.get(i..i + 2).unwrap_or("") {
                    "==" => ("==", 2),
                    "!=" => ("!=", 2),
                    "<=" => ("<=", 2),
                    ">=" => (">=", 2),
                    "&&" => ("and", 2),
                    "||" => ("or", 2),
                    _ => match c {
                        b'<' => ("<", 1),
                        b'>' => (">", 1),
                        b'!' => ("not", 1),
                        _ => return Err(err(start, "unexpected operator")),
                    },
                };
                i += len;
                out.push((start, Tok::Op(op)));
            }
            b'"' => {
                i += 1;
                let mut s = String::new();
                loop {
                    match b.get(i) {
                        None => return Err(err(start, "unterminated string")),
                        Some(b'"') => {
                            i += 1;
                            break;
                        }
                        Some(b'\\') => {
                            match b.get(i + 1) {
                                Some(b'"') => s.push('"'),
                                Some(b'\\') => s.push('\\'),
                                _ => return Err(err(i, "unknown escape in string")),
                            }
                            i += 2;
                        }
                        Some(_) => {
                            let ch = src[i..].chars().next().unwrap_or('\0');
                            s.push(ch);
                            i += ch.len_utf8();
                        }
                    }
                }
                out.push((start, Tok::Str(s)));
            }
            b'0'..=b'9' | b'-' => {
                i += 1;
                // After a '.', a number is a path segment (`args.lines.0.qty`): no fraction.
                let segment = matches!(out.last(), Some((_, Tok::Dot)));
                while i < b.len()
                    && (b[i].is_ascii_digit()
                        || b[i] == b'_'
                        || (!segment && matches!(b[i], b'e' | b'E'))
                        || (!segment && b[i] == b'.' && b.get(i + 1).is_some_and(u8::is_ascii_digit)))
                {
                    i += 1;
                }
                let text: String = src[start..i].chars().filter(|c| *c != '_').collect();
                let n: f64 = text
                    .parse()
                    .map_err(|_| err(start, &format!("bad number {:?}", &src[start..i])))?;
                out.push((start, Tok::Num(n)));
            }
            c if c.is_ascii_alphabetic() || c == b'_' => {
                while i < b.len() && (b[i].is_ascii_alphanumeric() || matches!(b[i], b'_' | b'-')) {
                    i += 1;
                }
                let word = &src[start..i];
                match word {
                    "and" => out.push((start, Tok::Op("and"))),
                    "or" => out.push((start, Tok::Op("or"))),
                    "not" => out.push((start, Tok::Op("not"))),
                    _ => out.push((start, Tok::Ident(word.to_string()))),
                }
            }
            _ => return Err(err(start, "unexpected character")),
        }
    }
    Ok(out)
}

struct Parser {
    toks: Vec<(usize, Tok)>,
    pos: usize,
    end: usize,
}

impl Parser {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos).map(|(_, t)| t)
    }
    fn offset(&self) -> usize {
        self.toks.get(self.pos).map_or(self.end, |(o, _)| *o)
    }
    fn err<T>(&self, m: impl Into<String>) -> Result<T, ExprError> {
        Err(ExprError {
            offset: self.offset(),
            message: m.into(),
        })
    }
    fn eat_op(&mut self, op: &'static str) -> bool {
        if self.peek() == Some(&Tok::Op(op)) {
            self.pos += 1;
            true
        } else {
            false
        }
    }
    fn or(&mut self) -> Result<Expr, ExprError> {
        let mut lhs = self.and()?;
        while self.eat_op("or") {
            lhs = Expr::Or(Box::new(lhs), Box::new(self.and()?));
        }
        Ok(lhs)
    }
    fn and(&mut self) -> Result<Expr, ExprError> {
        let mut lhs = self.unary()?;
        while self.eat_op("and") {
            lhs = Expr::And(Box::new(lhs), Box::new(self.unary()?));
        }
        Ok(lhs)
    }
    fn unary(&mut self) -> Result<Expr, ExprError> {
        if self.eat_op("not") {
            return Ok(Expr::Not(Box::new(self.unary()?)));
        }
        if self.peek() == Some(&Tok::LParen) {
            self.pos += 1;
            let e = self.or()?;
            if self.peek() != Some(&Tok::RParen) {
                return self.err("expected ')'");
            }
            self.pos += 1;
            return Ok(e);
        }
        let lhs = self.operand()?;
        let op = match self.peek() {
            Some(Tok::Op("==")) => CmpOp::Eq,
            Some(Tok::Op("!=")) => CmpOp::Ne,
            Some(Tok::Op("<")) => CmpOp::Lt,
            Some(Tok::Op("<=")) => CmpOp::Le,
            Some(Tok::Op(">")) => CmpOp::Gt,
            Some(Tok::Op(">=")) => CmpOp::Ge,
            _ => return Ok(Expr::Truthy(lhs)),
        };
        self.pos += 1;
        let rhs = self.operand()?;
        Ok(Expr::Cmp(lhs, op, rhs))
    }
    fn path(&mut self) -> Result<(Root, Vec<String>), ExprError> {
        let root = match self.peek() {
            Some(Tok::Ident(s)) if s == "args" => Root::Args,
            Some(Tok::Ident(s)) if s == "context" => Root::Context,
            _ => return self.err("expected a path starting with `args.` or `context.`"),
        };
        self.pos += 1;
        let mut segs = Vec::new();
        while self.peek() == Some(&Tok::Dot) {
            self.pos += 1;
            match self.peek().cloned() {
                Some(Tok::Ident(s)) => segs.push(s),
                Some(Tok::Num(n)) if n >= 0.0 && n.fract() == 0.0 => segs.push(format!("{n}")),
                _ => return self.err("expected a field name after '.'"),
            }
            self.pos += 1;
        }
        if segs.is_empty() {
            return self.err("a path needs at least one field, e.g. `args.amount`");
        }
        Ok((root, segs))
    }
    fn operand(&mut self) -> Result<Operand, ExprError> {
        match self.peek().cloned() {
            Some(Tok::Num(n)) => {
                self.pos += 1;
                Ok(Operand::Literal(
                    serde_json::Number::from_f64(n).map_or(Value::Null, Value::Number),
                ))
            }
            Some(Tok::Str(s)) => {
                self.pos += 1;
                Ok(Operand::Literal(Value::String(s)))
            }
            Some(Tok::Ident(s)) => match s.as_str() {
                "true" | "false" => {
                    self.pos += 1;
                    Ok(Operand::Literal(Value::Bool(s == "true")))
                }
                "null" => {
                    self.pos += 1;
                    Ok(Operand::Literal(Value::Null))
                }
                "len" => {
                    self.pos += 1;
                    if self.peek() != Some(&Tok::LParen) {
                        return self.err("expected '(' after len");
                    }
                    self.pos += 1;
                    let (root, segs) = self.path()?;
                    if self.peek() != Some(&Tok::RParen) {
                        return self.err("expected ')'");
                    }
                    self.pos += 1;
                    Ok(Operand::Len(root, segs))
                }
                _ => {
                    let (root, segs) = self.path()?;
                    Ok(Operand::Path(root, segs))
                }
            },
            Some(_) => self.err("expected a value or a path"),
            None => self.err("unexpected end of condition"),
        }
    }
}

impl Expr {
    pub fn parse(src: &str) -> Result<Expr, ExprError> {
        let toks = lex(src)?;
        let mut p = Parser {
            toks,
            pos: 0,
            end: src.len(),
        };
        if p.peek().is_none() {
            return p.err("empty condition");
        }
        let e = p.or()?;
        if p.peek().is_some() {
            return p.err("unexpected text after the condition");
        }
        Ok(e)
    }

    /// Evaluate against the call's arguments and context.
    pub fn eval(&self, args: &Value, context: &Value) -> bool {
        match self {
            Expr::Or(a, b) => a.eval(args, context) || b.eval(args, context),
            Expr::And(a, b) => a.eval(args, context) && b.eval(args, context),
            Expr::Not(a) => !a.eval(args, context),
            Expr::Truthy(o) => matches!(o.resolve(args, context), Resolved::Ref(Value::Bool(true))),
            Expr::Cmp(l, op, r) => compare(&l.resolve(args, context), *op, &r.resolve(args, context)),
        }
    }
}

enum Resolved<'a> {
    Ref(&'a Value),
    Missing,
    Len(f64),
}

fn lookup<'a>(mut v: &'a Value, segs: &[String]) -> Option<&'a Value> {
    for s in segs {
        v = match v {
            Value::Object(m) => m.get(s)?,
            Value::Array(a) => a.get(s.parse::<usize>().ok()?)?,
            _ => return None,
        };
    }
    Some(v)
}

impl Operand {
    fn resolve<'a>(&'a self, args: &'a Value, context: &'a Value) -> Resolved<'a> {
        let root = |r: &Root| match r {
            Root::Args => args,
            Root::Context => context,
        };
        match self {
            Operand::Literal(v) => Resolved::Ref(v),
            Operand::Path(r, segs) => lookup(root(r), segs).map_or(Resolved::Missing, Resolved::Ref),
            Operand::Len(r, segs) => match lookup(root(r), segs) {
                Some(Value::Array(a)) => Resolved::Len(a.len() as f64),
                Some(Value::String(s)) => Resolved::Len(s.chars().count() as f64),
                Some(Value::Object(o)) => Resolved::Len(o.len() as f64),
                _ => Resolved::Missing,
            },
        }
    }
}

fn compare(l: &Resolved, op: CmpOp, r: &Resolved) -> bool {
    let num = |x: &Resolved| match x {
        Resolved::Ref(Value::Number(n)) => n.as_f64(),
        Resolved::Len(n) => Some(*n),
        _ => None,
    };
    if let (Some(a), Some(b)) = (num(l), num(r)) {
        return match op {
            CmpOp::Eq => a == b,
            CmpOp::Ne => a != b,
            CmpOp::Lt => a < b,
            CmpOp::Le => a <= b,
            CmpOp::Gt => a > b,
            CmpOp::Ge => a >= b,
        };
    }
    match op {
        CmpOp::Eq | CmpOp::Ne => {
            let eq = match (l, r) {
                (Resolved::Ref(a), Resolved::Ref(b)) => a == b,
                (Resolved::Missing, Resolved::Missing)
                | (Resolved::Missing, Resolved::Ref(Value::Null))
                | (Resolved::Ref(Value::Null), Resolved::Missing) => true,
                _ => false,
            };
            eq == (op == CmpOp::Eq)
        }
        _ => match (l, r) {
            (Resolved::Ref(Value::String(a)), Resolved::Ref(Value::String(b))) => match op {
                CmpOp::Lt => a < b,
                CmpOp::Le => a <= b,
                CmpOp::Gt => a > b,
                _ => a >= b,
            },
            _ => false,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn t(src: &str, args: Value, ctx: Value) -> bool {
        Expr::parse(src)
            .unwrap_or_else(|e| panic!("{src}: {e}"))
            .eval(&args, &ctx)
    }

    #[test]
    fn numeric_thresholds() {
        assert!(t("args.amount > 5000", json!({"amount": 5000.01}), json!({})));
        assert!(!t("args.amount > 5000", json!({"amount": 5000}), json!({})));
        assert!(t("args.amount >= 5000", json!({"amount": 5000}), json!({})));
        assert!(t("args.amount<=1_000", json!({"amount": 999}), json!({})));
        assert!(t("args.amount != 3", json!({"amount": 4}), json!({})));
        assert!(t("args.delta < -2.5e1", json!({"delta": -30}), json!({})));
    }

    #[test]
    fn strings_are_not_numbers() {
        // "100" is a string: no coercion, so the threshold never matches.
        assert!(!t("args.amount > 50", json!({"amount": "100"}), json!({})));
        assert!(!t("args.amount == 100", json!({"amount": "100"}), json!({})));
    }

    #[test]
    fn booleans_and_context() {
        let ctx = json!({"page_sensitive": true});
        assert!(t("context.page_sensitive == true", json!({}), ctx.clone()));
        assert!(t("context.page_sensitive", json!({}), ctx.clone()));
        assert!(!t("not context.page_sensitive", json!({}), ctx));
        assert!(!t(
            "context.page_sensitive",
            json!({}),
            json!({"page_sensitive": "true"})
        ));
    }

    #[test]
    fn missing_paths_are_null_and_never_ordered() {
        assert!(!t("args.amount > 0", json!({}), json!({})));
        assert!(t("args.amount == null", json!({}), json!({})));
        assert!(t("args.amount != 1", json!({}), json!({})));
    }

    #[test]
    fn len_counts_arrays_and_characters() {
        assert!(t("len(args.paths) > 2", json!({"paths": [1, 2, 3]}), json!({})));
        assert!(t("len(args.s) == 2", json!({"s": "éa"}), json!({})));
        assert!(!t("len(args.missing) > 0", json!({}), json!({})));
    }

    #[test]
    fn precedence_and_parentheses() {
        let a = json!({"x": 1, "y": 2});
        assert!(t("args.x == 1 or args.y == 5 and args.x == 9", a.clone(), json!({})));
        assert!(!t("(args.x == 1 or args.y == 5) and args.x == 9", a.clone(), json!({})));
        assert!(t("args.x == 1 && !(args.y == 3)", a.clone(), json!({})));
        assert!(t("args.x == 2 || args.y == 2", a, json!({})));
    }

    #[test]
    fn nested_fields_and_array_indices() {
        let a = json!({"order": {"lines": [{"qty": 5}]}});
        assert!(t("args.order.lines.0.qty >= 5", a, json!({})));
    }

    #[test]
    fn strings_compare_exactly() {
        assert!(t(
            r#"args.to == "ceo@example.com""#,
            json!({"to": "ceo@example.com"}),
            json!({})
        ));
        assert!(t(r#"args.s == "a \"q\"""#, json!({"s": "a \"q\""}), json!({})));
    }

    #[test]
    fn parse_errors_have_columns() {
        let cases = [
            ("", 1),
            ("args.amount >", 14),
            ("amount > 5", 1),
            ("args. > 5", 7),
            ("args.amount > 5 5", 17),
            ("(args.a == 1", 13),
            ("args.a = 1", 8),
            ("args.a == \"x", 11),
            ("args.a == 1 $", 13),
        ];
        for (src, col) in cases {
            let e = Expr::parse(src).unwrap_err();
            assert_eq!(e.offset + 1, col, "{src:?}: {e}");
        }
    }
}
