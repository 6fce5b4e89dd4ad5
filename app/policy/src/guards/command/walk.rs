//! Walking the parsed script: lists, pipelines, compound commands, redirections and
//! word expansion, down to each simple command.

use super::*;

impl Analyzer<'_> {
    /// Parse and walk a whole script.
    pub(super) fn script(&mut self, src: &str, depth: usize) {
        if self.done() {
            return;
        }
        if depth > MAX_DEPTH {
            return self.unknown("commands nested too deeply to check");
        }
        if src.len() > MAX_SCRIPT {
            return self.unknown("command too long to check");
        }
        let mut parser = brush_parser::Parser::new(std::io::Cursor::new(src.as_bytes()), &self.opts);
        match parser.parse_program() {
            Ok(program) => {
                // A nested script must not clobber what the enclosing pipeline stage recorded.
                let saved = std::mem::take(&mut self.stage);
                for cc in &program.complete_commands {
                    self.compound_list(cc, depth);
                }
                self.stage = saved;
            }
            Err(e) => {
                let first = e.to_string();
                let first = first.lines().next().unwrap_or("");
                self.unknown(format!("the shell command cannot be parsed ({first})"));
            }
        }
    }

    pub(super) fn compound_list(&mut self, list: &ast::CompoundList, depth: usize) {
        for ast::CompoundListItem(and_or, sep) in &list.0 {
            let run = |a: &mut Self| {
                a.last_cd = None;
                a.pipeline(&and_or.first, depth);
                let single = and_or.first.seq.len() == 1 && !and_or.first.bang;
                let first_cd = a.last_cd.take().filter(|_| single);
                if and_or.additional.is_empty() {
                    return;
                }
                let before = a.cwd.clone();
                a.nested(|a| {
                    for (k, next) in and_or.additional.iter().enumerate() {
                        match next {
                            ast::AndOr::And(p) | ast::AndOr::Or(p) => {
                                // `cd X && …`: the rest of the chain runs only in X.
                                if k == 0 && matches!(next, ast::AndOr::And(_)) {
                                    if let Some(c) = &first_cd {
                                        a.cwd = c.clone();
                                    }
                                }
                                a.pipeline(p, depth)
                            }
                        }
                    }
                });
                a.union_cwd(before);
            };
            if matches!(sep, ast::SeparatorOperator::Async) {
                self.subshell(run);
            } else {
                run(self);
            }
            if self.done() {
                return;
            }
        }
    }

    pub(super) fn pipeline(&mut self, p: &ast::Pipeline, depth: usize) {
        let downloads_before = self.downloads;
        let mut printed: Option<String> = None;
        let many = p.seq.len() > 1;
        for (i, cmd) in p.seq.iter().enumerate() {
            self.stage = Stage::default();
            if many {
                // Each stage of a pipeline runs in a subshell.
                self.subshell(|a| a.command(cmd, depth));
            } else {
                self.command(cmd, depth);
            }
            if self.done() {
                return;
            }
            let stage = std::mem::take(&mut self.stage);
            if stage.runs_stdin {
                // Any download earlier in this pipeline, including inside `$(…)` of a stage.
                if i > 0 && self.downloads > downloads_before {
                    return self.dangerous("download and execute: a fetched script is piped into an interpreter");
                }
                match printed.take() {
                    Some(text) if i > 0 => self.nested(|a| a.script(&text, depth + 1)),
                    _ if i > 0 => self.unknown("a shell or interpreter runs commands read from a pipe"),
                    _ => self.unknown("a shell or interpreter runs commands read from standard input"),
                }
            }
            printed = stage.prints;
        }
    }

    pub(super) fn command(&mut self, cmd: &ast::Command, depth: usize) {
        self.commands += 1;
        if self.commands > MAX_COMMANDS {
            return self.unknown("too many commands to check");
        }
        match cmd {
            ast::Command::Simple(s) => self.simple(s, depth),
            ast::Command::Compound(c, redirects) => {
                if let Some(r) = redirects {
                    for io in &r.0 {
                        self.redirect(io, depth, &mut None);
                    }
                }
                self.compound(c, depth);
            }
            ast::Command::Function(f) => {
                let name = self.expand(&f.fname.value, depth).text;
                self.facts.functions.insert(name.to_ascii_lowercase());
                self.functions.push(name);
                let ast::FunctionBody(body, redirects) = &f.body;
                // The body runs later, from wherever it is called.
                self.subshell(|a| {
                    if let Some(r) = redirects {
                        for io in &r.0 {
                            a.redirect(io, depth, &mut None);
                        }
                    }
                    a.compound(body, depth)
                });
                self.functions.pop();
            }
            ast::Command::ExtendedTest(t, _) => self.ext_test(&t.expr, depth),
        }
    }

    pub(super) fn ext_test(&mut self, e: &ast::ExtendedTestExpr, depth: usize) {
        use ast::ExtendedTestExpr as E;
        match e {
            E::And(a, b) | E::Or(a, b) => {
                self.ext_test(a, depth);
                self.ext_test(b, depth);
            }
            E::Not(a) | E::Parenthesized(a) => self.ext_test(a, depth),
            E::UnaryTest(_, w) => {
                self.expand(&w.value, depth);
            }
            E::BinaryTest(op, a, b) => {
                // `-eq` and friends evaluate their operands as arithmetic, which runs
                // `$(…)` hidden in array subscripts even inside quotes.
                let arith = format!("{op:?}").contains("Arithmetic");
                for w in [a, b] {
                    if arith && (w.value.contains("$(") || w.value.contains('`')) {
                        self.unknown("an arithmetic comparison with a command substitution");
                    }
                    let e = self.expand(&w.value, depth);
                    if arith && !is_integer(&e.text) {
                        if e.dynamic {
                            self.unknown("an arithmetic comparison of a value the guard does not know");
                        } else {
                            self.arithmetic(&e.text, depth);
                        }
                    }
                }
            }
        }
    }

    /// An arithmetic expression: the values of the variables it names are evaluated as
    /// expressions too, and `a[$(…)]` inside such a value runs a command.
    pub(super) fn arithmetic(&mut self, expr: &str, depth: usize) {
        if expr.contains("$(") || expr.contains('`') {
            self.unknown("arithmetic evaluates the output of a command (it can hold `a[$(…)]`)");
        }
        for n in identifiers(expr) {
            if !self.numeric_safe(&n) {
                self.unknown(format!(
                    "arithmetic evaluates ${n}, whose value is not a number the guard knows (it can hold `a[$(…)]`)"
                ));
            }
        }
        for n in identifiers(expr) {
            // Any of them may be assigned (`i++`, `x = y`); only numbers come out.
            if !self.known(&n).is_some_and(|v| is_integer(v)) {
                self.poison_numeric(&n);
            }
        }
        // Command substitutions inside run like anywhere else.
        if expr.contains('$') || expr.contains('`') {
            self.nested(|a| a.expand(expr, depth));
        }
    }

    /// A loop body may run many times: run it twice when it moves the working directory.
    pub(super) fn loop_body(&mut self, f: &dyn Fn(&mut Self)) {
        let before = self.cwd.clone();
        self.maybe(f);
        if self.cwd != before {
            self.union_cwd(vec![Base::Lost]);
            self.maybe(f);
        }
    }

    pub(super) fn compound(&mut self, c: &ast::CompoundCommand, depth: usize) {
        use ast::CompoundCommand as C;
        match c {
            C::BraceGroup(b) => self.nested(|a| a.compound_list(&b.list, depth)),
            C::Subshell(s) => self.subshell(|a| a.compound_list(&s.list, depth)),
            C::ForClause(f) => {
                let mut numbers = f.values.is_some();
                for w in f.values.iter().flatten() {
                    for e in self.expand_words(&w.value, depth) {
                        numbers &= is_integer(&e.text);
                    }
                }
                if numbers {
                    self.poison_numeric(&f.variable_name);
                } else {
                    self.poison(&f.variable_name);
                }
                self.loop_body(&|a: &mut Self| a.compound_list(&f.body.list, depth));
            }
            C::ArithmeticForClause(f) => {
                for e in [&f.initializer, &f.condition, &f.updater].into_iter().flatten() {
                    self.arithmetic(&e.value, depth);
                }
                self.loop_body(&|a: &mut Self| a.compound_list(&f.body.list, depth));
            }
            C::CaseClause(cc) => {
                self.expand(&cc.value.value, depth);
                for item in &cc.cases {
                    for p in &item.patterns {
                        self.expand(&p.value, depth);
                    }
                    if let Some(l) = &item.cmd {
                        self.maybe(|a| a.compound_list(l, depth));
                    }
                }
            }
            C::IfClause(i) => {
                self.nested(|a| a.compound_list(&i.condition, depth));
                self.maybe(|a| a.compound_list(&i.then, depth));
                for e in i.elses.iter().flatten() {
                    if let Some(c) = &e.condition {
                        self.maybe(|a| a.compound_list(c, depth));
                    }
                    self.maybe(|a| a.compound_list(&e.body, depth));
                }
            }
            C::WhileClause(w) | C::UntilClause(w) => {
                self.loop_body(&|a: &mut Self| {
                    a.compound_list(&w.0, depth);
                    a.compound_list(&w.1.list, depth);
                });
            }
            C::Coprocess(c) => self.subshell(|a| a.command(&c.body, depth)),
            C::Arithmetic(e) => self.arithmetic(&e.expr.value, depth),
        }
    }

    /// Unquote a word, expanding literal variables we know and recursing into substitutions.
    pub(super) fn expand(&mut self, word: &str, depth: usize) -> Expanded {
        let mut out = Expanded::default();
        match brush_parser::word::parse(word, &self.opts) {
            Ok(pieces) => self.pieces(&pieces, word, depth, &mut out, false),
            Err(_) => {
                self.unknown("a word in the command cannot be parsed");
                out.text = word.to_string();
                out.dynamic = true;
            }
        }
        out
    }

    /// A here-document body: quotes are literal, only `$…`, `` `…` `` and `\` are special.
    pub(super) fn expand_heredoc(&mut self, body: &str, depth: usize) -> Expanded {
        let mut out = Expanded::default();
        match brush_parser::word::parse_heredoc(body, &self.opts) {
            Ok(pieces) => self.pieces(&pieces, body, depth, &mut out, true),
            Err(_) => {
                self.unknown("a here-document cannot be parsed");
                out.text = body.to_string();
                out.dynamic = true;
            }
        }
        out
    }

    /// A command word: known values split on blanks, braces expanded.
    pub(super) fn expand_words(&mut self, word: &str, depth: usize) -> Vec<Expanded> {
        let e = self.expand(word, depth);
        let texts: Vec<String> = if e.split_known {
            e.text.split_whitespace().map(str::to_string).collect()
        } else {
            vec![e.text.clone()]
        };
        let mut out = Vec::new();
        for t in texts {
            if !e.brace {
                out.push(Expanded { text: t, ..e.clone() });
                continue;
            }
            match brace_expand(&t) {
                Some(v) if v.len() == 1 && v[0] == t => out.push(Expanded {
                    text: t,
                    brace: false,
                    ..e.clone()
                }),
                Some(v) => out.extend(v.into_iter().map(|w| Expanded { text: w, ..e.clone() })),
                None => {
                    self.unknown("a brace expansion makes too many words to check");
                    out.push(Expanded { text: t, ..e.clone() });
                }
            }
        }
        out
    }

    pub(super) fn known(&self, n: &str) -> Option<&String> {
        if self.facts.all_poisoned || self.facts.poisoned.contains(n) {
            return None;
        }
        self.vars.get(n)
    }

    pub(super) fn pieces(
        &mut self,
        pieces: &[WordPieceWithSource],
        src: &str,
        depth: usize,
        out: &mut Expanded,
        quoted: bool,
    ) {
        for p in pieces {
            match &p.piece {
                WordPiece::Text(s) => {
                    if !quoted && (s.contains(['*', '?', '[']) || has_glob(s)) {
                        out.glob = true;
                    }
                    if !quoted {
                        if let Some(i) = s.find('{') {
                            out.brace_open = true;
                            out.brace |= s[i..].contains('}');
                        } else if out.brace_open && s.contains('}') {
                            out.brace = true;
                        }
                    }
                    out.text.push_str(s);
                }
                WordPiece::SingleQuotedText(s) => out.text.push_str(s),
                WordPiece::AnsiCQuotedText(s) => out.text.push_str(&decode_ansi_c(s)),
                WordPiece::DoubleQuotedSequence(v) | WordPiece::GettextDoubleQuotedSequence(v) => {
                    self.pieces(v, src, depth, out, true)
                }
                WordPiece::TildeExpansion(_) => out.text.push('~'),
                WordPiece::EscapeSequence(s) => out.text.push_str(s.strip_prefix('\\').unwrap_or(s)),
                WordPiece::ParameterExpansion(pe) => match pe {
                    ParameterExpr::Parameter {
                        parameter: Parameter::Named(n),
                        indirect: false,
                    } => {
                        if let Some(v) = self.known(n).cloned() {
                            if !quoted {
                                if self.facts.ifs {
                                    out.split = true;
                                } else if v.contains(char::is_whitespace) {
                                    out.split_known = true;
                                }
                                if has_glob(&v) {
                                    out.glob = true;
                                }
                            }
                            out.text.push_str(&v);
                        } else if n == "HOME" && !self.facts.poisoned.contains("HOME") && !self.facts.all_poisoned {
                            out.text.push('~');
                        } else if self.numeric_safe(n) {
                            // Only ever a number: no word splitting or globbing to fear.
                            out.dynamic = true;
                            out.text.push('0');
                        } else {
                            out.dynamic = true;
                            out.split |= !quoted;
                            out.text.push('$');
                        }
                    }
                    ParameterExpr::Parameter {
                        parameter: Parameter::Special(sp),
                        indirect: false,
                    } if !matches!(
                        sp,
                        SpecialParameter::AllPositionalParameters { .. } | SpecialParameter::ShellName
                    ) =>
                    {
                        // `$?`, `$$`, `$#`, `$!`, `$-`: a number or option letters.
                        out.dynamic = true;
                        out.text.push('0');
                    }
                    ParameterExpr::Parameter {
                        parameter: Parameter::NamedWithIndex { index, .. },
                        ..
                    } => {
                        // An indexed array's subscript is arithmetic.
                        let index = index.clone();
                        self.arithmetic(&index, depth);
                        out.dynamic = true;
                        out.split |= !quoted;
                        out.text.push('$');
                    }
                    ParameterExpr::Parameter { .. } | ParameterExpr::ParameterLength { .. } => {
                        out.dynamic = true;
                        out.split |= !quoted && !matches!(pe, ParameterExpr::ParameterLength { .. });
                        out.text.push('$');
                    }
                    other => {
                        if let ParameterExpr::Transform {
                            op: brush_parser::word::ParameterTransformOp::PromptExpand,
                            ..
                        } = other
                        {
                            self.unknown("${…@P} runs command substitutions held in the value");
                        }
                        if let ParameterExpr::AssignDefaultValues {
                            parameter: Parameter::Named(n) | Parameter::NamedWithIndex { name: n, .. },
                            ..
                        } = other
                        {
                            self.poison(n);
                        }
                        // Defaults, alternatives and patterns may hold `$(…)`: walk them.
                        match src.get(p.start_index..p.end_index) {
                            Some(raw) if raw.len() > 3 && raw.starts_with("${") && raw.ends_with('}') => {
                                let inner = &raw[2..raw.len() - 1];
                                if inner.contains(['$', '`']) {
                                    let d = self.nested(|a| a.expand(inner, depth));
                                    out.downloads |= d.downloads;
                                }
                            }
                            _ => {
                                if src.contains("$(") || src.contains('`') {
                                    self.unknown("a parameter expansion with a command substitution");
                                }
                            }
                        }
                        out.dynamic = true;
                        out.split |= !quoted;
                        out.text.push('$');
                    }
                },
                WordPiece::CommandSubstitution(s) | WordPiece::BackquotedCommandSubstitution(s) => {
                    out.dynamic = true;
                    out.split |= !quoted;
                    out.text.push('$');
                    let before = self.downloads;
                    self.subshell(|a| a.script(s, depth + 1));
                    out.downloads |= self.downloads > before;
                }
                WordPiece::ArithmeticExpression(e) => {
                    out.dynamic = true;
                    out.text.push('0');
                    self.arithmetic(&e.value, depth);
                }
            }
        }
    }

    pub(super) fn redirect(&mut self, io: &ast::IoRedirect, depth: usize, stdin: &mut Option<Stdin>) {
        use ast::{IoFileRedirectKind as K, IoFileRedirectTarget as T, IoRedirect as R};
        match io {
            R::File(fd, kind, target) => {
                let input =
                    matches!(fd, None | Some(0)) && matches!(kind, K::Read | K::ReadAndWrite | K::DuplicateInput);
                match target {
                    T::Filename(w) | T::Duplicate(w) => {
                        let t = self.expand(&w.value, depth);
                        if is_net_device(&t.text) {
                            return self.dangerous(format!(
                                "opens a network connection from the shell ({}): reverse shell pattern",
                                t.text
                            ));
                        }
                        let fd_dup = matches!(target, T::Duplicate(_))
                            && (t.text == "-" || t.text.chars().all(|c| c.is_ascii_digit()));
                        let writes = matches!(
                            kind,
                            K::Write | K::Append | K::Clobber | K::ReadAndWrite | K::DuplicateOutput
                        );
                        if writes && !fd_dup {
                            self.write_target(&t, "a redirection");
                        }
                        if input {
                            *stdin = Some(if t.text == "/dev/null" && !t.dynamic {
                                Stdin::Text(String::new())
                            } else {
                                Stdin::File
                            });
                        }
                    }
                    T::ProcessSubstitution(_, sub) => {
                        let before = self.downloads;
                        self.subshell(|a| a.compound_list(&sub.list, depth));
                        if input {
                            *stdin = Some(Stdin::Dynamic {
                                downloads: self.downloads > before,
                            });
                        }
                    }
                    T::Fd(_) => {
                        if input {
                            *stdin = Some(Stdin::File);
                        }
                    }
                }
            }
            R::OutputAndError(w, _) => {
                let t = self.expand(&w.value, depth);
                if is_net_device(&t.text) {
                    return self.dangerous(format!(
                        "opens a network connection from the shell ({}): reverse shell pattern",
                        t.text
                    ));
                }
                self.write_target(&t, "a redirection");
            }
            R::HereDocument(_, doc) => {
                *stdin = Some(if doc.requires_expansion {
                    let e = self.expand_heredoc(&doc.doc.value, depth);
                    if e.dynamic {
                        Stdin::Dynamic { downloads: e.downloads }
                    } else {
                        Stdin::Text(e.text)
                    }
                } else {
                    Stdin::Text(doc.doc.value.clone())
                });
            }
            R::HereString(_, w) => {
                let e = self.expand(&w.value, depth);
                *stdin = Some(if e.dynamic {
                    Stdin::Dynamic { downloads: e.downloads }
                } else {
                    Stdin::Text(e.text)
                });
            }
        }
    }

    pub(super) fn simple(&mut self, s: &ast::SimpleCommand, depth: usize) {
        use ast::CommandPrefixOrSuffixItem as I;
        // Only a `cd` that is the last command run decides where `&&` continues.
        self.last_cd = None;
        let mut words: Vec<Expanded> = Vec::new();
        let mut stdin: Option<Stdin> = None;
        let mut assignments: Vec<(String, Expanded)> = Vec::new();

        let mut item =
            |a: &mut Self, it: &I, words: &mut Vec<Expanded>, assignments: &mut Vec<(String, Expanded)>| match it {
                I::IoRedirect(io) => a.redirect(io, depth, &mut stdin),
                I::Word(w) => {
                    let ws = a.expand_words(&w.value, depth);
                    words.extend(ws)
                }
                I::AssignmentWord(asg, w) => {
                    let name = match &asg.name {
                        ast::AssignmentName::VariableName(n) => n.clone(),
                        ast::AssignmentName::ArrayElementName(n, index) => {
                            a.arithmetic(index, depth);
                            n.clone()
                        }
                    };
                    let mut value = match &asg.value {
                        ast::AssignmentValue::Scalar(v) => a.expand(&v.value, depth),
                        ast::AssignmentValue::Array(items) => {
                            for (_, v) in items {
                                a.expand(&v.value, depth);
                            }
                            Expanded {
                                dynamic: true,
                                ..Expanded::default()
                            }
                        }
                    };
                    if matches!(asg.name, ast::AssignmentName::ArrayElementName(..)) || asg.append {
                        value.dynamic = true;
                    }
                    if words.is_empty() {
                        assignments.push((name, value));
                    } else {
                        // An argument such as `alias ls='…'` or `export X=…`: keep it, unquoted,
                        // as one word (declaration arguments are not split).
                        let mut e = a.expand(&w.value, depth);
                        e.split = false;
                        e.split_known = false;
                        words.push(e);
                    }
                }
                I::ProcessSubstitution(_, sub) => {
                    let before = a.downloads;
                    a.subshell(|a| a.compound_list(&sub.list, depth));
                    let downloads = a.downloads > before;
                    words.push(Expanded {
                        text: "/dev/fd/63".into(),
                        dynamic: true,
                        downloads,
                        ..Expanded::default()
                    });
                }
            };

        if let Some(prefix) = &s.prefix {
            for it in &prefix.0 {
                item(self, it, &mut words, &mut assignments);
            }
        }
        if let Some(w) = &s.word_or_name {
            let ws = self.expand_words(&w.value, depth);
            words.extend(ws);
        }
        if let Some(suffix) = &s.suffix {
            for it in &suffix.0 {
                item(self, it, &mut words, &mut assignments);
            }
        }
        if self.done() {
            return;
        }
        if words.is_empty() {
            // `X=/` on its own: remember literal values for later words.
            for (n, e) in assignments {
                self.assign(&n, &e, depth);
            }
            return;
        }
        let is_read = words[0].text == "read";
        for (n, _) in &assignments {
            // `IFS= read -r line` only changes how `read` splits its input.
            if n == "IFS" && is_read {
                continue;
            }
            if n == "IFS" {
                self.facts.ifs = true;
                self.unknown("IFS is changed: word splitting is not modelled");
            }
            if is_code_env(n) {
                self.unknown(format!("{n} is set: it can make programs run other programs"));
            }
            // A prefix assignment persists after special built-ins in POSIX shells.
            self.poison(n);
        }
        if words.iter().any(|w| w.split) {
            self.unknown("an unquoted expansion of a value only known at run time (word splitting and globbing)");
        }
        self.invoke(&words, stdin.as_ref(), depth, false);
    }
}
