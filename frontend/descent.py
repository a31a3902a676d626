"""The parser's fast path: recursive descent over one top-level declaration.

``grammar.lark`` stays the language's definition and Lark's LALR(1) tables
(``parser._run``) its reference parser.  This module follows the same rules
by hand for the declarations sources are made of -- functions, kernels,
variables and classes, their statements and expressions -- because walking the tables
(a dictionary per token, a goto per reduction, a list per reduced rule) was
most of the parse.  Each rule here calls the ``parser._Builder`` method the
LALR loop calls for it, with the children Lark's tree-shaping gives that
rule, so both paths build their nodes in one place.

It accepts only what the grammar derives, choosing between alternatives by
the next token or two, as the LALR automaton does; the grammar is unambiguous
(its two shift/reduce conflicts, the dangling ``else`` and a class's trailing
``;``, are resolved greedily by both), so a declaration this path accepts has
the one tree the tables build.  Anything else -- a syntax error, a rare form
left out here (a file-scope ``T x(args);``), nesting deeper than Python's recursion
limit -- raises ``Fallback``, and ``parser.parse`` hands the declaration to the
LALR loop, which builds it or says what is wrong exactly as before.
``tests/frontend/test_descent.py`` checks that both paths give one tree on
every corpus, lit and example source and on generated programs, and that this
path never accepts a declaration the tables reject.
"""
from __future__ import annotations


class Fallback(Exception):
    """This declaration is for the LALR loop (``parser._run``)."""


#: tokens a ``type`` starts with (``TYPE_NAME`` unless ``::`` follows: that is ``Class::member``)
TYPE_START = frozenset(("CONST", "LOCAL", "PRIM", "TYPE_NAME", "ITEM", "DEVICE_GLOBAL", "REDUCER", "SPEC_ID",
                        "KERNEL_HANDLER"))
#: binary operators' precedence (C's, as the grammar's ``?lor`` ... ``?mul`` chain), all left-associative
BINARY = {"OROR": 1, "ANDAND": 2, "PIPE": 3, "CARET": 4, "AMP": 5, "EQOP": 6, "LT": 7, "GT": 7, "RELOP": 7,
          "SHIFTOP": 8, "PLUS": 9, "MINUS": 9, "STAR": 10, "SLASH": 10, "PERCENT": 10}
#: single-token primaries and their builder
_LITERALS = {"INT": "int_lit", "FLOAT": "float_lit", "CHAR": "char_lit", "BOOL": "bool_lit",
             "NULLPTR": "null_lit", "THIS": "this_expr", "NAME": "name"}
#: prefix operators whose operand is a ``cast`` (``-x``, ``*p``, ``&v``) and their builder
_PREFIX = {"MINUS": "unop", "PLUS": "unop", "BANG": "unop", "TILDE": "unop", "STAR": "deref", "AMP": "addrof"}
_PROP_ARGS = frozenset(("NAME", "STRING", "INT", "BOOL", "PRIM"))


class Deferred:
    """A top-level function's body, not parsed yet: its tokens (``{`` to ``}``).
    ``Descent(builder, defer=True)`` leaves bodies so, for the front end's
    workers to parse (``frontend.workers``); ``parse_body`` makes the block."""

    __slots__ = ("tokens", "file")

    def __init__(self, tokens: list, file: str):
        self.tokens, self.file = tokens, file


class Reparse(Exception):
    """A deferred body, or a body ``lexer.tokenize`` left to a worker, that the
    fast path does not take (a syntax error, a lexical diagnostic, a rare form):
    the source is parsed again the serial way, which says what the serial path says."""


class Descent:
    """Recursive descent over one declaration's tokens (``parse``), building
    with ``builder`` (a ``parser._Builder``); with ``defer``, a top-level
    function's body is a ``Deferred``."""

    def __init__(self, builder, defer: bool = False):
        self.b = builder
        self.defer = defer
        #: the ``Deferred`` bodies made, in order
        self.deferred: list[Deferred] = []
        self.t: list = []
        self.i = 0
        self.binop, self.logical = builder.binop, builder.logical
        self.literals = {kind: getattr(builder, name) for kind, name in _LITERALS.items()}
        self.prefix = {kind: getattr(builder, name) for kind, name in _PREFIX.items()}

    # -- tokens
    def fail(self):
        raise Fallback

    def expect(self, kind: str):
        tok = self.t[self.i]
        if tok[0] != kind:
            raise Fallback
        self.i += 1
        return tok

    def parenthesised(self):
        """``( expr )``: the expression."""
        self.expect("_LPAR")
        e = self.expr()
        self.expect("_RPAR")
        return e

    def type_starts(self) -> bool:
        t, i = self.t, self.i
        kind = t[i][0]
        return kind in TYPE_START and (kind != "TYPE_NAME" or t[i + 1][0] != "_SCOPE")

    # -- the declaration
    def parse(self, chunk: list, end) -> list:
        """The ``start`` rule's value over ``chunk`` then ``end``, or ``Fallback``."""
        self.t, self.i = chunk + [end], 0
        try:
            items = []
            while self.t[self.i][0] != "$END":
                items.append(self.item())
            return self.b.start(items)
        except (IndexError, RecursionError):
            raise Fallback from None
        finally:
            self.t = []

    def item(self):
        t = self.t
        kind = t[self.i][0]
        if kind == "_SEMI":
            self.i += 1
            return self.b.empty([])
        specs = []
        while kind == "SPEC":
            specs.append(t[self.i])
            self.i += 1
            kind = t[self.i][0]
        if kind == "CLASS" and not specs:
            return self.class_def()
        specs = self.b.specs(specs)
        if kind == "KERNEL":
            kw = t[self.i]
            self.i += 1
            name = self.expect("NAME")
            return self.b.kernel([specs, kw, name, *self.params(), *self.props_opt(), self.top_body()])
        if not self.type_starts():
            raise Fallback                      # no declaration at all
        return self.function_or_variable(specs, top=True)

    def top_body(self):
        """A top-level function's ``body``; with ``defer``, a ``{...}`` that ends
        the declaration (the chunk's last ``}``, with no brace before it) is left
        as a ``Deferred``."""
        t, i = self.t, self.i
        if self.defer and t[i][0] == "_LBRACE":
            last = len(t) - 2                   # t[-1] is the end marker
            if t[last][0] == "_SEMI":
                last -= 1
            if t[last][0] == "RBRACE" and not any(k[0] == "_LBRACE" or k[0] == "RBRACE" for k in t[:i]):
                self.i = last + 1
                body = Deferred(t[i:last + 1], self.b.file)
                self.deferred.append(body)
                return body
        return self.body()

    def parse_body(self, body: Deferred):
        """The block of a ``Deferred`` body, or ``Fallback`` where this path does not take it."""
        self.b.file = body.file
        self.t, self.i = body.tokens + [("$END", "", 0, 0)], 0
        try:
            block = self.block()
            if self.t[self.i][0] != "$END":
                raise Fallback
            return block
        except (IndexError, RecursionError):
            raise Fallback from None
        finally:
            self.t = []

    def function_or_variable(self, specs, top: bool = False):
        """``function`` or ``var_decl`` after their ``specs``."""
        t = self.t
        ty = self.type()
        name = self.expect("NAME")
        if t[self.i][0] == "_LPAR":
            nxt = t[self.i + 1][0]
            if nxt != "_RPAR" and not (nxt in TYPE_START and (nxt != "TYPE_NAME" or t[self.i + 2][0] != "_SCOPE")):
                raise Fallback                  # ``T x(args);``: a variable with constructor arguments
            c = [specs, ty, name, *self.params()]
            if t[self.i][0] == "OVERRIDE":
                c.append(t[self.i])
                self.i += 1
            c += self.props_opt()
            c.append(self.top_body() if top else self.body())
            return self.b.function(c)
        return self.b.var_decl(self.declarators_then_semi([specs, ty, self.declarator(name)]))

    def class_def(self):
        t = self.t
        c = [t[self.i], None]
        self.i += 1
        c[1] = self.expect("TYPE_NAME")
        if t[self.i][0] == "_COLON":            # base_clause
            self.i += 1
            base = [t[self.i]] if t[self.i][0] == "PUBLIC" else []
            self.i += len(base)
            base.append(self.expect("TYPE_NAME"))
            c.append(self.b.base_clause(base))
        self.expect("_LBRACE")
        while t[self.i][0] != "RBRACE":
            c.append(self.member())
        c.append(t[self.i])
        self.i += 1
        if t[self.i][0] == "_SEMI":
            self.i += 1
        return self.b.class_def(c)

    def member(self):
        t = self.t
        tok = t[self.i]
        if tok[0] == "PUBLIC" or tok[0] == "ACCESS":
            self.i += 1
            self.expect("_COLON")
            return self.b.access_label([tok])
        specs = []
        while t[self.i][0] == "SPEC":
            specs.append(t[self.i])
            self.i += 1
        specs = self.b.specs(specs)
        tok = t[self.i]
        if tok[0] == "TILDE":
            self.i += 1
            name = self.expect("TYPE_NAME")
            self.expect("_LPAR")
            self.expect("_RPAR")
            return self.b.dtor([specs, tok, name, self.body()])
        if tok[0] == "TYPE_NAME" and t[self.i + 1][0] == "_LPAR":
            self.i += 1
            return self.b.ctor([specs, tok, *self.params(), *self.props_opt(), self.body()])
        if not self.type_starts():
            raise Fallback
        return self.function_or_variable(specs)

    def params(self) -> list:
        """``( params )``, as the one child ``params`` gives."""
        self.expect("_LPAR")
        t = self.t
        c = []
        if t[self.i][0] != "_RPAR":
            while True:
                ty = self.type()
                p = [ty]
                if t[self.i][0] == "NAME":
                    p.append(t[self.i])
                    self.i += 1
                p.append(self.dims())
                c.append(self.b.param(p))
                if t[self.i][0] != "_COMMA":
                    break
                self.i += 1
        self.expect("_RPAR")
        return [self.b.params(c)]

    def body(self):
        if self.t[self.i][0] == "_SEMI":
            self.i += 1
            return self.b.no_body([])
        return self.block()

    def props_opt(self) -> list:
        """``[[prop, ...]]`` as a one-child list, or no child."""
        t = self.t
        if t[self.i][0] != "_PROPS":
            return []
        self.i += 1
        self.expect("_LSQB")
        c = []
        while True:
            p = [self.expect("NAME")]
            if t[self.i][0] == "_LPAR":
                self.i += 1
                if t[self.i][0] != "_RPAR":
                    while True:
                        tok = t[self.i]
                        if tok[0] in _PROP_ARGS:
                            self.i += 1
                            p.append(tok)
                        elif tok[0] == "MINUS":
                            self.i += 1
                            p.append(self.b.neg_int([tok, self.expect("INT")]))
                        else:
                            raise Fallback
                        if t[self.i][0] != "_COMMA":
                            break
                        self.i += 1
                self.expect("_RPAR")
            c.append(self.b.prop(p))
            if t[self.i][0] != "_COMMA":
                break
            self.i += 1
        self.expect("_RSQB")
        self.expect("_RSQB")
        return [self.b.props(c)]

    # -- types
    def type(self):
        t = self.t
        c = []
        if t[self.i][0] == "CONST":
            c.append(t[self.i])
            self.i += 1
        if t[self.i][0] == "LOCAL":
            c.append(t[self.i])
            self.i += 1
        tok = t[self.i]
        kind = tok[0]
        b = self.b
        self.i += 1
        if kind == "PRIM":
            words = [tok]
            while t[self.i][0] == "PRIM":
                words.append(t[self.i])
                self.i += 1
            c.append(b.prim_type(words))
        elif kind == "TYPE_NAME":
            c.append(b.named_type([tok]))
        elif kind == "ITEM":
            c.append(b.item_type([tok, self.expect("LT"), self.expect("INT"), self.expect("GT")]))
        elif kind == "DEVICE_GLOBAL" or kind == "SPEC_ID":
            lt = self.expect("LT")
            inner = self.type()
            parts = [tok, lt, inner, self.dims(), self.expect("GT")]
            c.append(b.dg_type(parts) if kind == "DEVICE_GLOBAL" else b.spec_id_type(parts))
        elif kind == "REDUCER":
            lt = self.expect("LT")
            inner = self.type()
            self.expect("_COMMA")
            c.append(b.reducer_type([tok, lt, inner, self.expect("NAME"), self.expect("GT")]))
        elif kind == "KERNEL_HANDLER":
            c.append(b.handler_type([tok]))
        else:
            raise Fallback
        while t[self.i][0] == "STAR":
            c.append(t[self.i])
            self.i += 1
        return b.type(c)

    def dims(self):
        t = self.t
        c = []
        while t[self.i][0] == "_LSQB":
            self.i += 1
            if t[self.i][0] == "_RSQB":
                c.append(None)
            else:
                c.append(self.expr())
            self.expect("_RSQB")
        return self.b.dims(c)

    # -- declarators
    def declarator(self, name):
        t = self.t
        kind = t[self.i][0]
        if kind == "_LPAR":                     # ``T x(a, b)``
            self.i += 1
            c = [name, self.initializer()]
            while t[self.i][0] == "_COMMA":
                self.i += 1
                c.append(self.initializer())
            self.expect("_RPAR")
            return self.b.paren_declarator(c)
        c = [name, self.dims()]
        kind = t[self.i][0]
        if kind == "_PROPS":
            c += self.props_opt()
            kind = t[self.i][0]
        if kind == "_EQ":
            self.i += 1
            c.append(self.initializer())
        elif kind == "_LBRACE":
            c.append(self.init_list())
        return self.b.declarator(c)

    def initializer(self):
        return self.init_list() if self.t[self.i][0] == "_LBRACE" else self.assign()

    def init_list(self):
        t = self.t
        self.expect("_LBRACE")
        c = []
        if t[self.i][0] != "RBRACE":
            while True:
                c.append(self.initializer())
                if t[self.i][0] != "_COMMA":
                    break
                self.i += 1
                if t[self.i][0] == "RBRACE":
                    break                       # a trailing comma
        c.append(self.expect("RBRACE"))
        return self.b.init_list(c)

    # -- statements
    def block(self):
        self.expect("_LBRACE")
        t = self.t
        stmts = []
        stmt = self.stmt
        while t[self.i][0] != "RBRACE":
            stmts.append(stmt())
        stmts.append(t[self.i])
        self.i += 1
        return self.b.block(stmts)

    def stmt(self):
        t = self.t
        tok = t[self.i]
        kind = tok[0]
        b = self.b
        if kind in TYPE_START and (kind != "TYPE_NAME" or t[self.i + 1][0] != "_SCOPE"):
            return self.local_decl()
        if kind == "IF":
            self.i += 1
            cond = self.parenthesised()
            then = self.stmt()
            other = None
            if t[self.i][0] == "_ELSE":
                self.i += 1
                other = self.stmt()
            return b.if_stmt([tok, cond, then, other])
        if kind == "_LBRACE":
            return self.block()
        if kind == "FOR":
            self.i += 1
            self.expect("_LPAR")
            if self.type_starts():
                init = b.for_init([self.local_decl()])
            else:
                init = b.for_init([self.opt_exprs()])
                self.expect("_SEMI")
            cond = b.opt_expr([None if t[self.i][0] == "_SEMI" else self.expr()])
            self.expect("_SEMI")
            step = self.opt_exprs()
            self.expect("_RPAR")
            return b.for_stmt([tok, init, cond, step, self.stmt()])
        if kind == "RETURN":
            self.i += 1
            value = None if t[self.i][0] == "_SEMI" else self.expr()
            self.expect("_SEMI")
            return b.return_stmt([tok, value])
        if kind == "WHILE":
            self.i += 1
            cond = self.parenthesised()
            return b.while_stmt([tok, cond, self.stmt()])
        if kind == "_DO":
            self.i += 1
            body = self.stmt()
            kw = self.expect("WHILE")
            cond = self.parenthesised()
            self.expect("_SEMI")
            return b.do_stmt([body, kw, cond])
        if kind == "BREAK" or kind == "CONTINUE":
            self.i += 1
            self.expect("_SEMI")
            return b.break_stmt([tok]) if kind == "BREAK" else b.continue_stmt([tok])
        if kind == "IF_DEVICE" or kind == "IF_HOST":
            self.i += 1
            then = self.block()
            other = None
            if t[self.i][0] == "_OTHERWISE":
                self.i += 1
                other = self.block()
            return b.if_device([tok, then, other])
        if kind == "_SEMI":
            self.i += 1
            return b.empty_stmt([])
        e = self.expr()
        self.expect("_SEMI")
        return b.expr_stmt([e])

    def local_decl(self):
        return self.b.local_decl(self.declarators_then_semi([self.type(), self.declarator(self.expect("NAME"))]))

    def declarators_then_semi(self, c: list) -> list:
        """``c`` with each further ``, name ...`` declarator, then the ``;``."""
        t = self.t
        while t[self.i][0] == "_COMMA":
            self.i += 1
            c.append(self.declarator(self.expect("NAME")))
        self.expect("_SEMI")
        return c

    def opt_exprs(self):
        t = self.t
        c = []
        if t[self.i][0] not in ("_SEMI", "_RPAR"):
            c.append(self.expr())
            while t[self.i][0] == "_COMMA":
                self.i += 1
                c.append(self.expr())
        return self.b.opt_exprs(c)

    # -- expressions
    def expr(self):
        return self.assign()

    def assign(self):
        """``?assign``: a ``unary`` then ``=`` or a compound operator, else a conditional."""
        t = self.t
        if t[self.i][0] == "_LPAR" and self.cast_follows():
            left = self.cast()
        else:
            left = self.unary()
            tok = t[self.i]
            if tok[0] == "_EQ":
                self.i += 1
                return self.b.assign([left, self.assign()])
            if tok[0] == "ASSIGN_OP":
                self.i += 1
                return self.b.assign([left, tok, self.assign()])
        left = self.binary(left, 1)
        if t[self.i][0] == "_QMARK":
            self.i += 1
            then = self.expr()
            self.expect("_COLON")
            return self.b.ternary([left, then, self.cond()])
        return left

    def cond(self):
        left = self.binary(self.cast(), 1)
        if self.t[self.i][0] == "_QMARK":
            self.i += 1
            then = self.expr()
            self.expect("_COLON")
            return self.b.ternary([left, then, self.cond()])
        return left

    def binary(self, left, lowest: int):
        """Operators of precedence ``lowest`` and above after the operand ``left``."""
        t = self.t
        binary = BINARY
        while True:
            tok = t[self.i]
            prec = binary.get(tok[0])
            if prec is None or prec < lowest:
                return left
            self.i += 1
            right = self.cast()
            nxt = binary.get(t[self.i][0])
            if nxt is not None and nxt > prec:
                right = self.binary(right, prec + 1)
            left = (self.logical if prec <= 2 else self.binop)([left, tok, right])

    def cast_follows(self) -> bool:
        """At ``(``: whether a type follows (a cast, not a parenthesised expression)."""
        t, i = self.t, self.i + 1
        kind = t[i][0]
        return kind in TYPE_START and (kind != "TYPE_NAME" or t[i + 1][0] != "_SCOPE")

    def cast(self):
        if self.t[self.i][0] == "_LPAR" and self.cast_follows():
            self.i += 1
            ty = self.type()
            self.expect("_RPAR")
            return self.b.cast([ty, self.cast()])
        return self.unary()

    def unary(self):
        t = self.t
        tok = t[self.i]
        kind = tok[0]
        build = self.literals.get(kind)
        if build is not None:                   # the commonest case, inlined: a one-token primary
            self.i += 1
            return self.postfix(build([tok]))
        build = self.prefix.get(kind)
        if build is not None:
            self.i += 1
            return build([tok, self.cast()])
        b = self.b
        if kind == "INCDEC":
            self.i += 1
            return b.preincdec([tok, self.unary()])
        if kind == "SIZEOF":
            self.i += 1
            self.expect("_LPAR")
            if self.type_starts():
                ty = self.type()
                c = [tok, ty, self.dims()]
                self.expect("_RPAR")
                return b.sizeof_type(c)
            e = self.expr()
            self.expect("_RPAR")
            return b.sizeof_expr([tok, e])
        if kind == "NEW":
            self.i += 1
            count = self.parenthesised()
            cls = self.expect("TYPE_NAME")
            args = None
            if t[self.i][0] == "_LPAR":
                self.i += 1
                args = self.args()
                self.expect("_RPAR")
            return b.new_expr([tok, count, cls, args])
        return self.postfix(self.primary())

    def primary(self):
        t = self.t
        tok = t[self.i]
        kind = tok[0]
        self.i += 1
        if kind == "STRING":
            c = [tok]
            while t[self.i][0] == "STRING":
                c.append(t[self.i])
                self.i += 1
            return self.b.str_lit(c)
        if kind == "TYPE_NAME":
            self.expect("_SCOPE")
            return self.b.scoped([tok, self.expect("NAME")])
        if kind == "_LPAR":
            self.i -= 1
            return self.parenthesised()
        raise Fallback

    def postfix(self, e):
        t = self.t
        b = self.b
        while True:
            tok = t[self.i]
            kind = tok[0]
            if kind == "_LSQB":
                self.i += 1
                index = self.expr()
                self.expect("_RSQB")
                e = b.index([e, index])
            elif kind == "_LPAR":
                self.i += 1
                args = self.args()
                self.expect("_RPAR")
                e = b.call([e, args])
            elif kind == "DOT" or kind == "ARROW":
                self.i += 1
                if kind == "DOT" and t[self.i][0] == "GET_SPEC_CONST":
                    get = t[self.i]
                    self.i += 1
                    c = [e, tok, get, self.expect("LT"), self.expect("NAME"), self.expect("GT")]
                    self.expect("_LPAR")
                    self.expect("_RPAR")
                    e = b.spec_get(c)
                else:
                    e = b.member([e, tok, self.expect("NAME")])
            elif kind == "INCDEC":
                self.i += 1
                e = b.postincdec([e, tok])
            else:
                return e

    def args(self):
        t = self.t
        c = []
        if t[self.i][0] != "_RPAR":
            c.append(self.assign())
            while t[self.i][0] == "_COMMA":
                self.i += 1
                c.append(self.assign())
        return self.b.args(c)
