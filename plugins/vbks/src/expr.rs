//! Kernel expressions: trees of the base kernels SE, RQ, LIN and PER joined by `+` and `×`,
//! in a canonical form so that expressions equal up to commutativity and associativity
//! compare (and print) equal (spec §1.5, Duvenaud et al. 2013).
//!
//! Canonical form: nested sums inside sums (and products inside products) are flattened;
//! the operands of every sum and product are sorted (sums, then products, then bases; each
//! by printed form). Printing uses
//! `+` and `*`, parenthesising a sum that is a factor of a product: `(PER+RQ)*LIN`.
//! Parsing accepts the same text, case-insensitive, with `*`, `×` or `x` for products.

use std::cmp::Ordering;
use std::fmt;

/// A base kernel (formulas in `kernel.rs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Base {
    /// Linear (dot product), no offset.
    Lin,
    /// Periodic (Rasmussen–Williams/MacKay form).
    Per,
    /// Rational quadratic.
    Rq,
    /// Squared exponential.
    Se,
}

impl Base {
    /// All four, in the order used when enumerating the kernel space.
    pub const ALL: [Base; 4] = [Base::Se, Base::Rq, Base::Lin, Base::Per];

    /// Upper-case name: `SE`, `RQ`, `LIN`, `PER`.
    pub fn name(self) -> &'static str {
        match self {
            Base::Se => "SE",
            Base::Rq => "RQ",
            Base::Lin => "LIN",
            Base::Per => "PER",
        }
    }

    /// The base kernel of a name (case-insensitive).
    pub fn from_name(name: &str) -> Option<Base> {
        match name.to_ascii_uppercase().as_str() {
            "SE" => Some(Base::Se),
            "RQ" => Some(Base::Rq),
            "LIN" => Some(Base::Lin),
            "PER" => Some(Base::Per),
            _ => None,
        }
    }
}

/// A kernel expression. Build through [`Expr::sum`], [`Expr::prod`] or [`Expr::parse`],
/// which return the canonical form.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Expr {
    /// One base kernel.
    Base(Base),
    /// A sum of two or more operands, none of them a sum.
    Sum(Vec<Expr>),
    /// A product of two or more operands, none of them a product.
    Prod(Vec<Expr>),
}

impl PartialOrd for Expr {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Expr {
    /// Sums first, then products, then base kernels; within a kind by printed form. So a
    /// product prints its sum operand first (`(PER+RQ)*LIN`) and a sum its products first
    /// (`LIN*RQ+PER`), as in the paper's table.
    fn cmp(&self, other: &Self) -> Ordering {
        let rank = |e: &Expr| match e {
            Expr::Sum(_) => 0,
            Expr::Prod(_) => 1,
            Expr::Base(_) => 2,
        };
        rank(self)
            .cmp(&rank(other))
            .then_with(|| self.to_string().cmp(&other.to_string()))
    }
}

impl Expr {
    /// The canonical sum of `operands` (flattening nested sums, sorting).
    pub fn sum(operands: Vec<Expr>) -> Expr {
        Self::join(operands, true)
    }

    /// The canonical product of `operands` (flattening nested products, sorting).
    pub fn prod(operands: Vec<Expr>) -> Expr {
        Self::join(operands, false)
    }

    fn join(operands: Vec<Expr>, is_sum: bool) -> Expr {
        let mut flat = Vec::with_capacity(operands.len());
        for op in operands {
            match (op, is_sum) {
                (Expr::Sum(inner), true) | (Expr::Prod(inner), false) => flat.extend(inner),
                (other, _) => flat.push(other),
            }
        }
        flat.sort();
        match flat.len() {
            1 => flat.swap_remove(0),
            _ if is_sum => Expr::Sum(flat),
            _ => Expr::Prod(flat),
        }
    }

    /// Number of base-kernel occurrences (the expression's size).
    pub fn n_bases(&self) -> usize {
        match self {
            Expr::Base(_) => 1,
            Expr::Sum(c) | Expr::Prod(c) => c.iter().map(Expr::n_bases).sum(),
        }
    }

    /// Parse `text` (e.g. `"(PER+RQ)*LIN"`, `"per × lin × rq"`) into canonical form.
    pub fn parse(text: &str) -> Result<Expr, String> {
        let tokens = tokenize(text)?;
        let mut parser = Parser { tokens, pos: 0 };
        let expr = parser.expr()?;
        if parser.pos != parser.tokens.len() {
            return Err(format!(
                "kernel expression \"{text}\": unexpected {} at token {}",
                parser.tokens[parser.pos].describe(),
                parser.pos + 1
            ));
        }
        Ok(expr)
    }
}

impl fmt::Display for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Expr::Base(b) => f.write_str(b.name()),
            Expr::Sum(c) => {
                for (i, e) in c.iter().enumerate() {
                    if i > 0 {
                        f.write_str("+")?;
                    }
                    write!(f, "{e}")?;
                }
                Ok(())
            }
            Expr::Prod(c) => {
                for (i, e) in c.iter().enumerate() {
                    if i > 0 {
                        f.write_str("*")?;
                    }
                    match e {
                        Expr::Sum(_) => write!(f, "({e})")?,
                        _ => write!(f, "{e}")?,
                    }
                }
                Ok(())
            }
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
enum Token {
    Name(Base),
    Plus,
    Times,
    Open,
    Close,
}

impl Token {
    fn describe(&self) -> String {
        match self {
            Token::Name(b) => b.name().to_string(),
            Token::Plus => "'+'".into(),
            Token::Times => "'*'".into(),
            Token::Open => "'('".into(),
            Token::Close => "')'".into(),
        }
    }
}

fn tokenize(text: &str) -> Result<Vec<Token>, String> {
    let mut out = Vec::new();
    let chars: Vec<char> = text.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        match c {
            ' ' | '\t' => i += 1,
            '+' => {
                out.push(Token::Plus);
                i += 1;
            }
            '*' | '×' => {
                out.push(Token::Times);
                i += 1;
            }
            '(' => {
                out.push(Token::Open);
                i += 1;
            }
            ')' => {
                out.push(Token::Close);
                i += 1;
            }
            c if c.is_ascii_alphabetic() => {
                let start = i;
                while i < chars.len() && chars[i].is_ascii_alphabetic() {
                    i += 1;
                }
                let word: String = chars[start..i].iter().collect();
                if word.eq_ignore_ascii_case("x") {
                    out.push(Token::Times);
                } else {
                    let base = Base::from_name(&word).ok_or_else(|| {
                        format!(
                            "kernel expression \"{text}\": unknown base kernel \"{word}\" (expected SE, RQ, LIN or PER)"
                        )
                    })?;
                    out.push(Token::Name(base));
                }
            }
            other => {
                return Err(format!(
                    "kernel expression \"{text}\": unexpected character '{other}'"
                ));
            }
        }
    }
    if out.is_empty() {
        return Err("kernel expression is empty".into());
    }
    Ok(out)
}

struct Parser {
    tokens: Vec<Token>,
    pos: usize,
}

impl Parser {
    fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.pos)
    }

    fn expr(&mut self) -> Result<Expr, String> {
        let mut terms = vec![self.term()?];
        while self.peek() == Some(&Token::Plus) {
            self.pos += 1;
            terms.push(self.term()?);
        }
        Ok(Expr::sum(terms))
    }

    fn term(&mut self) -> Result<Expr, String> {
        let mut factors = vec![self.factor()?];
        while self.peek() == Some(&Token::Times) {
            self.pos += 1;
            factors.push(self.factor()?);
        }
        Ok(Expr::prod(factors))
    }

    fn factor(&mut self) -> Result<Expr, String> {
        match self.tokens.get(self.pos).cloned() {
            Some(Token::Name(b)) => {
                self.pos += 1;
                Ok(Expr::Base(b))
            }
            Some(Token::Open) => {
                self.pos += 1;
                let e = self.expr()?;
                if self.peek() != Some(&Token::Close) {
                    return Err(format!("missing ')' at token {}", self.pos + 1));
                }
                self.pos += 1;
                Ok(e)
            }
            Some(t) => Err(format!(
                "expected a base kernel or '(' at token {}, found {}",
                self.pos + 1,
                t.describe()
            )),
            None => Err("expression ends where a base kernel or '(' was expected".into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_forms_ignore_order_and_nesting() {
        let a = Expr::parse("(PER + RQ) × LIN").unwrap();
        let b = Expr::parse("lin*(rq+per)").unwrap();
        assert_eq!(a, b);
        assert_eq!(a.to_string(), "(PER+RQ)*LIN");
        let c = Expr::parse("SE+(PER+PER)").unwrap();
        assert_eq!(c.to_string(), "PER+PER+SE");
        let d = Expr::parse("PER x LIN x RQ").unwrap();
        assert_eq!(d.to_string(), "LIN*PER*RQ");
        assert_eq!(Expr::parse(&d.to_string()).unwrap(), d);
        assert_eq!(d.n_bases(), 3);
    }

    #[test]
    fn bad_text_is_an_error() {
        for bad in ["", "SE+", "FOO", "(SE", "SE)", "SE RQ", "SE-RQ"] {
            assert!(Expr::parse(bad).is_err(), "{bad:?} parsed");
        }
    }
}
