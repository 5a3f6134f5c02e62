#!/usr/bin/env python3
"""Generates random AG_FUNCTION programs for the differential fuzzer.

One C++ file holds a batch of marked functions (each with its unmarked
helpers) and a main() that calls each of them with inputs of several dtypes
and shapes, so that the staged build traces each function more than once.
fuzz.py builds the file as written (eager) and as agc transpiled it (staged)
and compares what the two print.

Function `index` of seed `seed` depends on (seed, index) only, so a batch can
leave functions out (--only) and a failing function regenerates alone.

What the generated code guarantees, so that eager runs are defined and exact:
every loop has a counter with a small bound; no division (floordiv and mod by
positive constants only); values stay small integers (assignments go through
fz_clip), so float32 arithmetic is exact; every variable keeps the dtype and
shape of the input `x`; conditions are scalar bools.
"""
import argparse
import math
import random
import sys

# The multi_block call's x: more elements than two blocks of a fused group
# (1,024 each), its values a cycle that fz_input repeats. int32, whose sums
# are exact in any order.
MULTI_BLOCK_SHAPE = (2500,)
MULTI_BLOCK_CYCLE = 37

FEATURES = {
    "if": "if / else if / else chains on tensor conditions, nested",
    "while": "while loops with a tensor condition",
    "do_while": "do/while loops with a tensor condition",
    "for_range": "for (auto i : ag::range(...))",
    "for_c": "C-style for with a tensor counter and bound",
    "cxx_for": "C++ int for loops and C++ ifs (unrolled by tracing) around staged code",
    "cxx_for_in_loop": "C++ int for loops inside the body of a staged loop",
    "break": "break in tensor loops",
    "continue": "continue in tensor loops",
    "return": "return at any depth of staged code",
    "cxx_jump": "continue of a C++ loop from staged code (a guard then holds the rest of the "
                "iteration); return inside a C++ if, or inside one C++ loop through C++ code only",
    "ternary": "?: on tensor conditions, tensor and C++ number branches",
    "logical": "&&, ||, ! on tensor conditions",
    "where": "ag::where on elementwise conditions",
    "helper": "unmarked helpers with control flow, called from marked code",
    "tensor_array": "ag::TensorArray write/read/size/stack",
    "locals": "tensor locals declared inside branches and loop bodies",
    "cross_branch": "a variable set in one branch of an if and read in a later branch",
    "loopvar_assign": "a range-for body that reassigns its loop variable",
    "kill_after_jump": "after a break/continue/return, assignments that overwrite a variable unread",
    "retrace": "calls with several dtypes, shapes and C++ int arguments",
    "transposed_rows": "rows of a tensor stacked along x's last axis and transposed to the front "
                       "(dynamic_rnn's input), read at a scalar tensor index in loops and branches",
    "transposed_arrays": "dynamic_rnn-like loops: a state updated by one binary op of a row of a "
                         "sequence (possibly longer than the loop) or of a loop-invariant tensor "
                         "and written to a static-size TensorArray at the counter, the array "
                         "stacked and transposed (rows moved off axis 0); near misses too",
    "array_broadcast": "in transposed_arrays loops, some rows of lower rank than the state, "
                       "which broadcast against it",
    "large_arrays": "in transposed_arrays loops, some arrays of more than 1,024 elements, whose "
                    "zeros stay a zeros op (not folded into a constant)",
    "unknown_dims": "some functions are also called (in the staged build) from an ag::function "
                    "whose input_signature leaves every dim of x unknown, so that their graph "
                    "runs with the shapes it learns only when it runs",
    "broadcast_to": "ag::broadcast_to of a reduction of x-shaped data back to x's shape",
    "method": "some functions are marked methods of an ag::Module reading a private member: "
              "in or out of their class, const, static",
    "bindings": "structured bindings of a pair, a tuple or an array (by reference) of data "
                "tensors, assigned like any local, also through std::tie",
    "auto_return": "helpers whose return type is deduced: declared `auto`, or lambdas without "
                   "`-> T` defined in the marked function (their staged returns keep the "
                   "value in a local of the deduced type)",
    "cond_reassigned": "an if whose condition is a bool local that its own branch reassigns "
                       "(to a new comparison or to a bool made before the if)",
    "bitwise": "& | ^ ~ << >> of data cast to int32 (bitwise) and of scalar bool conditions "
               "(the logical ops, both sides evaluated)",
    "strings": "data written out as string tensors and read back (ag::strings::as_string, "
               "to_number in the data's dtype), or the lengths of those texts, whole or cut by "
               "ag::strings::substr at tensor positions",
    "increment": "++ and -- of data variables, prefix and postfix, as statements and as the "
                 "operand of an expression",
    "error_lines": "a top-level if whose condition compares x itself (not reduced), alone or "
                   "under && or ||: calls with a non-scalar x fail, with the same message, "
                   "naming the same line, in both builds",
    "dataset": "some for_range loops iterate over an ag::data::range(K) mapped to int32, "
               "made in the function: agc stages them as one loop that pulls each element",
    "conv": "a convolution block over data laid out as a small image: a convolution, a "
            "per-channel bias, the image as residual, then relu, ReLU6 as ONNX's Clip imports "
            "or nothing (the chain the graph makes one fused_conv of)",
    "rnn": "a recurrent layer over data laid out as a sequence: a GRU (with and without "
           "reset_after), a tanh RNN or an LSTM over the whole sequence as one op, its "
           "outputs scaled and rounded",
    "print": "ag::print of a data variable as a statement, in straight-line code, branches "
             "and loop bodies: both builds must print the same lines, once per iteration and "
             "per taken branch (also under a tape, whose gradient must not print again)",
    "multi_block": "some functions are also called with an int32 x of %d elements (a cycle of "
                   "%d values), so that fused groups run several blocks and a partial one"
                   % (MULTI_BLOCK_SHAPE[0], MULTI_BLOCK_CYCLE),
}

# How a function that is a method is written (the "method" feature).
METHOD_FORMS = ["in_class", "in_class_const", "out_of_class", "out_of_class_const",
                "static_in_class", "static_out_of_class"]

# (dtype, shape) of the inputs; each function is called with a sample.
# int32 [24]: more elements than a flat step takes, so fused groups run their
# block loops (composed stages, guarded steps).
INPUT_KINDS = [("float32", ()), ("int32", (3,)), ("float64", (2, 3)), ("float32", (3,)),
               ("int32", ()), ("float64", (3,)), ("int32", (24,))]

PARAMS = "ag::Tensor x, ag::Tensor n, int m"
CLIP = 32           # fz_clip keeps values in [-CLIP, CLIP]
ROWS_BOUND = 13     # fz_transposed_rows of x (|x| <= 5): x, x + 1, 2x - 3
MAX_BOUND = 4096    # largest |value| an expression may reach (float32-exact after sums)
# fz_conv of fz_clip'd data, by variant (relu, ReLU6, none): a channel of 16
# holds at most (3 taps * 16 + 1 residual) * (CLIP + 15) plus a bias of 2.
CONV_BOUNDS = [(3 * 16 + 1) * (CLIP + 15) + 2, 6, (3 * 16 + 1) * (CLIP + 15) + 2]
# fz_rnn: round(4 h) of a state h in (-1, 1); its variants (GRU, GRU without
# reset_after, tanh RNN, LSTM).
RNN_BOUND = 4
RNN_VARIANTS = 4


class Scope:
    """What the code at one point may read and assign."""

    def __init__(self, parent=None, **changes):
        self.parent = parent
        if parent is None:
            self.data = []          # tensors shaped like x: (name, bound)
            self.assignable = []    # data names that statements may assign
            self.scalars = []       # int32 scalar tensors: (name, bound)
            self.cxx_ints = []      # C++ ints: (name, bound)
            self.loops = []         # enclosing loops: "tensor" or "cxx"
            self.staged_since_loop = False  # a tensor if lies between here and loops[-1]
            self.in_cxx = False     # inside a C++ for or C++ if
            self.has_ta = False
            self.excluded = set()   # names assigned by earlier branches of an enclosing if
            self.reassignable_loop_vars = []
            self.cxx_loop = None    # the body scope of the innermost C++ loop
        else:
            for k, v in vars(parent).items():
                if k != "parent":
                    setattr(self, k, list(v) if isinstance(v, list) else
                            set(v) if isinstance(v, set) else v)
        for k, v in changes.items():
            setattr(self, k, v)
        self.assigned = set()       # names this scope's statements assign (propagated up)

    def note_assign(self, name):
        s = self
        while s is not None:
            s.assigned.add(name)
            s = s.parent

    def readable(self, items):
        return [it for it in items if it[0] not in self.excluded]


class FunctionGen:
    def __init__(self, seed, index, features):
        self.rng = random.Random(f"{seed}:{index}")
        self.name = f"f_{seed}_{index}"
        self.f = features
        # Drawn apart from self.rng: a function that stays free is the same
        # with and without the "method" feature.
        form_rng = random.Random(f"{seed}:{index}:method")
        self.method_form = (form_rng.choice(METHOD_FORMS)
                            if self.on("method") and form_rng.random() < 0.4 else None)
        self.bias = form_rng.randint(0, 2)
        # Also apart from self.rng: a function without rows is the same with
        # and without the "transposed_rows" feature.
        self.rows_rng = random.Random(f"{seed}:{index}:rows")
        self.has_rows = self.on("transposed_rows") and self.rows_rng.random() < 0.3
        # Likewise for the "transposed_arrays" loops.
        self.arrays_rng = random.Random(f"{seed}:{index}:arrays")
        self.has_arrays = self.on("transposed_arrays") and self.arrays_rng.random() < 0.35
        # Also apart: which data atoms are a reduction broadcast back.
        self.spread_rng = random.Random(f"{seed}:{index}:spread")
        # Also apart: whether main() calls it with x's dims unknown too.
        self.unknown_dims = (self.on("unknown_dims") and
                             random.Random(f"{seed}:{index}:dims").random() < 0.5)
        # Also apart: where structured bindings and reassigned conditions go.
        self.bind_rng = random.Random(f"{seed}:{index}:bindings")
        self.cond_rng = random.Random(f"{seed}:{index}:cond_reassigned")
        self.helper_form_rng = random.Random(f"{seed}:{index}:auto_return")
        self.bits_rng = random.Random(f"{seed}:{index}:bitwise")
        self.strings_rng = random.Random(f"{seed}:{index}:strings")
        self.step_rng = random.Random(f"{seed}:{index}:increment")
        self.dataset_rng = random.Random(f"{seed}:{index}:dataset")
        self.conv_rng = random.Random(f"{seed}:{index}:conv")
        self.rnn_rng = random.Random(f"{seed}:{index}:rnn")
        self.print_rng = random.Random(f"{seed}:{index}:print")
        # Also apart: whether the function starts with a condition that may
        # not be a scalar (not with unknown dims, whose error shows None dims).
        errors_rng = random.Random(f"{seed}:{index}:error_lines")
        self.errors_rng = (errors_rng if self.on("error_lines") and not self.unknown_dims and
                           errors_rng.random() < 0.2 else None)
        self.counter = 0
        self.helpers = []         # (name, lines, is_lambda)
        self.stmt_budget = 0

    def fresh(self, prefix):
        self.counter += 1
        return f"{prefix}{self.counter}"

    def on(self, feature):
        return feature in self.f

    # ---- expressions ---------------------------------------------------------
    def data_atom(self, sc):
        r = self.rng
        choices = [(n, b) for n, b in sc.readable(sc.data)]
        if self.on("broadcast_to") and self.spread_rng.random() < 0.08:
            name, bound = self.spread_rng.choice(choices)
            reduce = self.spread_rng.choice(["reduce_max", "reduce_min"])
            return f"fz_spread(ag::{reduce}({name}), {sc.data[0][0]})", bound
        if self.on("conv") and self.conv_rng.random() < 0.05:
            name, _ = self.conv_rng.choice(choices)
            variant = self.conv_rng.randrange(len(CONV_BOUNDS))
            return f"fz_conv(fz_clip({name}), {variant})", CONV_BOUNDS[variant]
        if self.on("rnn") and self.rnn_rng.random() < 0.04:
            name, _ = self.rnn_rng.choice(choices)
            return f"fz_rnn(fz_clip({name}), {self.rnn_rng.randrange(RNN_VARIANTS)})", RNN_BOUND
        if self.has_rows and not self.in_helper and self.rows_rng.random() < 0.2:
            index, _ = self.rows_rng.choice(sc.readable(sc.scalars))
            return f"fz_row(rows, {index})", ROWS_BOUND
        if sc.has_ta and "ta" not in sc.excluded and r.random() < 0.15:
            return "ta.read(ta.size() - 1)", CLIP
        if self.helpers and not self.in_helper and r.random() < 0.25:
            name, _, _ = r.choice(self.helpers)
            arg, _ = r.choice(choices)
            return f"{name}({arg}, n)", CLIP
        return r.choice(choices)

    def scalar_atom(self, sc):
        r = self.rng
        options = [(str(r.randint(1, 4)), 4)]
        options += sc.readable(sc.scalars)
        options += sc.cxx_ints
        if sc.has_ta and "ta" not in sc.excluded:
            options.append(("ta.size()", 400))
        return r.choice(options)

    def expr(self, sc, depth=0):
        """A data-shaped expression: (code, bound)."""
        r = self.rng
        if self.on("bitwise") and depth < 2 and self.bits_rng.random() < 0.08:
            return self.bitwise_expr(sc, depth)
        if self.on("strings") and depth < 2 and self.strings_rng.random() < 0.06:
            return self.string_expr(sc, depth)
        if depth >= 2 or r.random() < 0.3:
            return self.data_atom(sc)
        form = r.choice(["add", "sub", "mul", "scalar", "scalar", "max", "min", "abs", "neg",
                         "floordiv", "mod", "where", "guarded"])
        if form == "guarded" and self.on("where"):
            return self.guarded_step(sc)
        a, ba = self.expr(sc, depth + 1)
        if form in ("add", "sub", "mul", "max", "min"):
            b, bb = self.expr(sc, depth + 1) if r.random() < 0.6 else self.scalar_atom(sc)
            if form == "mul" and ba * bb > MAX_BOUND:
                form = "add"
            if form == "add":
                return f"({a} + {b})", ba + bb
            if form == "sub":
                return f"({a} - {b})", ba + bb
            if form == "mul":
                return f"({a} * {b})", ba * bb
            return f"ag::{'maximum' if form == 'max' else 'minimum'}({a}, {b})", max(ba, bb)
        if form == "scalar":
            s, bs = self.scalar_atom(sc)
            op = r.choice(["+", "-", "*"])
            if op == "*" and ba * bs > MAX_BOUND:
                op = "+"
            bound = ba * bs if op == "*" else ba + bs
            return (f"({a} {op} {s})" if r.random() < 0.5 else f"({s} {op} {a})"), bound
        if form == "abs":
            return f"ag::abs({a})", ba
        if form == "neg":
            return f"-{a}" if a.startswith("(") else f"-({a})", ba
        if form == "floordiv":
            return f"ag::floordiv({a}, {r.randint(2, 3)})", ba
        if form == "mod":
            return f"({a} % {r.randint(2, 5)})", 5
        if not self.on("where"):
            return a, ba
        b, bb = self.expr(sc, depth + 1)
        c1, _ = self.data_atom(sc)
        c2, _ = self.expr(sc, depth + 1)
        return f"ag::where({c1} {r.choice(['>', '<', '>=', '=='])} {c2}, {a}, {b})", max(ba, bb)

    def bitwise_expr(self, sc, depth):
        """A bitwise op of an expression cast to int32, cast back to its dtype: (code, bound)."""
        r = self.bits_rng
        a, ba = self.expr(sc, depth + 1)
        bits = f"ag::cast({a}, ag::int32)"
        form = r.choice(["&", "|", "^", "~", "<<", ">>"])
        if form == "~":
            code, bound = f"~{bits}", ba + 1
        elif form == "<<":
            shift = 1 if 2 * ba <= MAX_BOUND else 0
            code, bound = f"({bits} << {shift})", ba * 2
        elif form == ">>":
            code, bound = f"({bits} >> {r.randint(0, 2)})", ba
        else:
            # |a op k| < 2 * max(|a|, k) + 1 for k in [1, 7].
            k = r.randint(1, 7)
            code, bound = f"({bits} {form} {k})", 2 * max(ba, k) + 1
        return f"ag::cast({code}, ({a}).dtype())", bound

    def string_expr(self, sc, depth):
        """An expression written as text and read back in its dtype, or its text's length
        in its dtype: (code, bound)."""
        a, ba = self.expr(sc, depth + 1)
        text = f"ag::strings::as_string({a})"
        if self.strings_rng.random() < 0.6:
            # %d is exact; %f rounds to 6 decimals, which moves a value by less than 1.
            return f"ag::strings::to_number({text}, ({a}).dtype())", ba + 1
        # "-4096.000000": at most 12 bytes.
        length = f"ag::strings::length({text})"
        if self.strings_rng.random() < 0.5:
            return f"ag::cast({length}, ({a}).dtype())", 12
        # All but the last byte, cut at tensor positions from the end.
        cut = f"ag::strings::substr({text}, -{length}, {length} - 1)"
        return f"ag::cast(ag::strings::length({cut}), ({a}).dtype())", 12

    def guarded_step(self, sc):
        """Collatz's step of a variable, one of its forms: (code, bound)."""
        r = self.rng
        v, bv = self.data_atom(sc)
        s, t, e = r.randint(2, 3), r.randint(1, 3), r.randint(-2, 2)
        if bv * t + abs(e) > MAX_BOUND:
            t = 1
        addend = r.choice([f"{v} * {t} + {e}", f"{e} - {t} * {v}", f"{v} * {t} - {e}"])
        inner = [f"ag::floordiv({v}, {s})", addend]
        if r.random() < 0.5:
            inner.reverse()
        test = f"{v} % {s} {r.choice(['==', '!='])} {r.randint(0, 1)}"
        step = f"ag::where({test}, {inner[0]}, {inner[1]})"
        guard = f"{v} {r.choice(['>', '<', '>=', '<=', '==', '!='])} {r.randint(-1, 2)}"
        branches = [step, v] if r.random() < 0.5 else [v, step]
        return f"ag::where({guard}, {branches[0]}, {branches[1]})", bv * t + abs(e)

    def cond(self, sc, depth=0, plain=False):
        """A scalar bool tensor; `plain`: no &&, || or ! at its top (an operand of & | ^,
        where a && or || would give a C++ bool that agc cannot stage)."""
        r = self.rng
        cmp = r.choice([">", "<", ">=", "<=", "==", "!="])
        if self.on("logical") and depth < 2 and r.random() < 0.25 and not plain:
            form = r.choice(["and", "or", "not"])
            if form == "not":
                return f"!({self.cond(sc, depth + 1)})"
            op = "&&" if form == "and" else "||"
            if self.on("bitwise") and self.bits_rng.random() < 0.3:
                op = self.bits_rng.choice(["&", "|", "^"])
                return (f"({self.cond(sc, depth + 1, plain=True)}) {op} "
                        f"({self.cond(sc, depth + 1, plain=True)})")
            return f"({self.cond(sc, depth + 1)}) {op} ({self.cond(sc, depth + 1)})"
        scalars = sc.readable(sc.scalars)
        if scalars and r.random() < 0.3:
            s, _ = r.choice(scalars)
            if r.random() < 0.4:
                return f"{s} % 2 == {r.randint(0, 1)}"
            return f"{s} {cmp} {r.randint(0, 3)}"
        e, _ = self.expr(sc, 1)
        kind = r.choice(["reduce_sum", "reduce_max", "reduce_min", "any", "all"])
        if kind in ("any", "all"):
            e2, _ = self.expr(sc, 1)
            return f"ag::reduce_{kind}({e} {cmp} {e2})"
        return f"ag::{kind}({e}) {cmp} {r.randint(-6, 6)}"

    def loop_bound(self, sc):
        return self.rng.choice(["n", "(n + 1)", "ag::minimum(n, 2)", "ag::Tensor(2)", "(n - 1)"])

    # ---- statements ----------------------------------------------------------
    def target(self, sc):
        """A variable this statement may assign, or None."""
        targets = [n for n in sc.assignable if n not in sc.excluded]
        return self.rng.choice(targets) if targets else None

    def keeps_live(self):
        """True when assignments must read their target: after a jump, unless kill_after_jump."""
        return self.jumped and not self.on("kill_after_jump")

    def assign(self, sc, ind):
        name = self.target(sc)
        if name is None:
            return []
        if self.on("bindings") and self.bind_rng.random() < 0.1:
            return self.tie_assign(sc, ind, name)
        if self.on("increment") and self.step_rng.random() < 0.1:
            return self.step_assign(sc, ind, name)
        e, _ = self.expr(sc)
        sc.note_assign(name)
        if self.keeps_live():
            return [f"{ind}{name} = fz_clip({name} + {e});"]
        return [f"{ind}{name} = fz_clip({e});"]

    def step_assign(self, sc, ind, name):
        """`++v;`, `v--;`, or a postfix step read by an assignment to v (clipped)."""
        r = self.step_rng
        op = r.choice(["++", "--"])
        sc.note_assign(name)
        form = r.choice(["prefix", "postfix", "read"])
        if form == "prefix":
            return [f"{ind}{op}{name};"]
        if form == "postfix":
            return [f"{ind}{name}{op};"]
        # v is stepped, then overwritten by a value computed from its old one.
        return [f"{ind}{name} = fz_clip(({name}{op}) * 2);"]

    def tie_assign(self, sc, ind, first):
        """`std::tie(a, b) = std::pair{...}`: two targets assigned at once."""
        second = self.target(sc)
        if second == first:
            second = None
        values = []
        for name in (first, second):
            if name is None:
                continue
            e, _ = self.expr(sc)
            values.append(f"fz_clip({name} + {e})" if self.keeps_live() else f"fz_clip({e})")
        for name in (first, second):
            if name is not None:
                sc.note_assign(name)
        if second is None:
            return [f"{ind}std::tie({first}) = std::tuple<ag::Tensor>{{{values[0]}}};"]
        return [f"{ind}std::tie({first}, {second}) = std::pair{{{values[0]}, {values[1]}}};"]

    def binding(self, sc, ind):
        """`auto [a, b] = ...` of two data tensors; a and b are then locals like any."""
        a, b = self.fresh("p"), self.fresh("p")
        e1, _ = self.expr(sc)
        e2, _ = self.expr(sc)
        form = self.bind_rng.choice(["pair", "tuple", "array_ref"])
        lines = []
        if form == "pair":
            lines.append(f"{ind}[[maybe_unused]] auto [{a}, {b}] = "
                         f"std::pair{{fz_clip({e1}), fz_clip({e2})}};")
        elif form == "tuple":
            lines.append(f"{ind}[[maybe_unused]] auto [{a}, {b}] = "
                         f"std::tuple<ag::Tensor, ag::Tensor>{{fz_clip({e1}), fz_clip({e2})}};")
        else:
            array = self.fresh("arr")
            lines += [f"{ind}std::array<ag::Tensor, 2> {array}{{fz_clip({e1}), fz_clip({e2})}};",
                      f"{ind}[[maybe_unused]] auto& [{a}, {b}] = {array};"]
        sc.data += [(a, CLIP), (b, CLIP)]
        sc.assignable += [a, b]
        return lines

    def block(self, sc, depth, ind, nmin=1, nmax=3):
        lines = []
        for _ in range(self.rng.randint(nmin, nmax)):
            lines += self.stmt(sc, depth, ind)
        return lines

    def child(self, sc, **changes):
        return Scope(sc, **changes)

    def jump(self, sc, ind, staged):
        """A break, continue or return allowed here, or None; `staged`: under a tensor if.

        Left out, as agc rejects them by design (the C++ loop would have to be
        staged, and its int counter cannot be): a break of a C++ loop from
        staged code, a return from staged code inside a C++ loop, a return in
        nested C++ loops, and a break or return after a staged continue or a
        return in its C++ loop (they run inside that jump's guard).
        """
        r = self.rng
        staged = staged or sc.staged_since_loop
        in_cxx_loop = bool(sc.loops) and sc.loops[-1] == "cxx"
        guarded = in_cxx_loop and sc.cxx_loop.guarded
        options = []
        if sc.loops:
            if self.on("break") and not (in_cxx_loop and (staged or guarded)):
                options.append("break")
            if self.on("continue") and (not (in_cxx_loop and staged) or self.on("cxx_jump")):
                options.append("continue")
        if self.on("return"):
            if "cxx" not in sc.loops:
                ok = not sc.in_cxx or self.on("cxx_jump")
            else:
                ok = (self.on("cxx_jump") and in_cxx_loop and sc.loops.count("cxx") == 1
                      and not staged and not guarded)
            if ok:
                options.append("return")
        if not options:
            return None
        kind = r.choice(options)
        self.jumped = True
        # The rest of the C++ loop's body runs in a guard (for a return: when
        # another return is staged).
        if in_cxx_loop and (kind == "return" or (kind == "continue" and staged)):
            sc.cxx_loop.guarded = True
        if kind == "return":
            e, _ = self.expr(sc)
            return f"{ind}return {e};"
        return f"{ind}{kind};"

    def stmt(self, sc, depth, ind):
        r = self.rng
        self.stmt_budget -= 1
        kinds = [("assign", 6)]
        if depth < 3 and self.stmt_budget > 0:
            in_loop = "tensor" in sc.loops
            kinds += [(k, w) for k, w, feat in [
                ("cxx_for", 1, "cxx_for_in_loop" if in_loop else "cxx_for")] if self.on(feat)]
            kinds += [(k, w) for k, w, feat in [
                ("if", 3, "if"), ("while", 1, "while"), ("do", 1, "do_while"),
                ("for_range", 1, "for_range"), ("for_c", 1, "for_c"),
                ("cxx_if", 1, "cxx_for"), ("cross", 1, "cross_branch")] if self.on(feat)]
        kinds += [(k, w) for k, w, feat in [
            ("local", 2, "locals"), ("ternary", 2, "ternary"), ("ta_write", 2, "tensor_array"),
            ("jump", 1, None)] if feat is None or self.on(feat)]
        if not sc.has_ta or "ta" in sc.excluded:
            kinds = [k for k in kinds if k[0] != "ta_write"]
        if self.on("bindings") and self.bind_rng.random() < 0.06:
            return self.binding(sc, ind)
        if self.on("print") and sc.readable(sc.data) and self.print_rng.random() < 0.05:
            # Zeros unsigned, as harness.h prints results: a graph may
            # simplify x + 0 to x, which keeps a -0.
            name, _ = self.print_rng.choice(sc.readable(sc.data))
            unsigned = f"ag::where({name} == 0, ag::zeros_like({name}), {name})"
            return [f'{ind}ag::print("{name}:", {unsigned});']
        kind = r.choices([k for k, _ in kinds], [w for _, w in kinds])[0]
        inner = ind + "  "

        if kind == "assign":
            return self.assign(sc, ind)
        if kind == "local":
            name = self.fresh("t")
            e, _ = self.expr(sc)
            sc.data.append((name, CLIP))
            sc.assignable.append(name)
            return [f"{ind}ag::Tensor {name} = fz_clip({e});"]
        if kind == "ternary":
            name = self.target(sc)
            if name is None:
                return []
            c = self.cond(sc)
            a, _ = self.expr(sc)
            keep = f"{name} + " if self.keeps_live() else ""
            sc.note_assign(name)
            if r.random() < 0.4:
                return [f"{ind}{name} = fz_clip({keep}{a} * ({c} ? {r.randint(-2, 2)} : {r.randint(-2, 2)}));"]
            b, _ = self.expr(sc)
            return [f"{ind}{name} = fz_clip({keep}(({c}) ? {a} : {b}));"]
        if kind == "ta_write":
            e, _ = self.expr(sc)
            sc.note_assign("ta")
            return [f"{ind}ta = ta.write(ta.size(), fz_clip({e}));"]
        if kind == "jump":
            # Bare, under a C++ if, or under a tensor if (staged).
            form = r.choice(["bare", "cxx_if", "tensor_if", "tensor_if"])
            if form == "cxx_if" and not sc.cxx_ints:
                form = "bare"
            j = self.jump(sc, inner, staged=(form == "tensor_if"))
            if j is None:
                return self.assign(sc, ind)
            if form == "bare":
                return [j[len(inner) - len(ind):]]
            if form == "cxx_if":
                k, _ = r.choice(sc.cxx_ints)
                return [f"{ind}if ({k} > 0) {{", j, f"{ind}}}"]
            return [f"{ind}if ({self.cond(sc)}) {{", j, f"{ind}}}"]
        if kind in ("if", "cross"):
            return self.if_chain(sc, depth, ind, cross=(kind == "cross"))
        if kind == "cxx_if":
            if not sc.cxx_ints:
                return self.assign(sc, ind)
            k, _ = r.choice(sc.cxx_ints)
            c = r.choice([f"{k} % 2 == 0", f"{k} > 0", f"{k} < 2"])
            lines = [f"{ind}if ({c}) {{"]
            lines += self.block(self.child(sc, in_cxx=True), depth + 1, inner)
            if r.random() < 0.5:
                lines += [f"{ind}}} else {{"] + self.block(self.child(sc, in_cxx=True), depth + 1, inner)
            return lines + [f"{ind}}}"]
        return self.loop(kind, sc, depth, ind)

    def if_chain(self, sc, depth, ind, cross):
        r = self.rng
        inner = ind + "  "
        lines = []
        pre = None
        if cross:
            # A local set in the then-branch and read in the else-branch only.
            pre = self.fresh("c")
            e, _ = self.expr(sc)
            lines.append(f"{ind}ag::Tensor {pre} = fz_clip({e});")
        excluded = set(sc.excluded)
        n_branches = r.choice([1, 1, 2, 2, 3])
        has_else = r.random() < 0.6 or cross
        flag = None
        if self.on("cond_reassigned") and self.cond_rng.random() < 0.3:
            # The condition is a bool local that its own branch reassigns: the
            # if must read it when it is reached.
            flag = self.fresh("b")
            lines.append(f"{ind}ag::Tensor {flag} = {self.cond(sc)};")
        for b in range(n_branches):
            bsc = self.child(sc, staged_since_loop=True, excluded=set(excluded))
            c = flag if b == 0 and flag else self.cond(bsc)
            lines.append(f"{ind}{'if' if b == 0 else '} else if'} ({c}) {{")
            if b == 0 and flag:
                earlier = self.cond_rng.choice(["new", "negated"])
                value = self.cond(bsc) if earlier == "new" else f"!{flag}"
                lines.append(f"{inner}{flag} = {value};")
            if cross and b == 0:
                e, _ = self.expr(bsc)
                lines.append(f"{inner}{pre} = fz_clip({e});")
            lines += self.block(bsc, depth + 1, inner)
            if not self.on("cross_branch"):
                excluded |= bsc.assigned
        if has_else:
            bsc = self.child(sc, staged_since_loop=True, excluded=set(excluded))
            lines.append(f"{ind}}} else {{")
            if cross:
                tgt = self.target(bsc) or pre
                bsc.note_assign(tgt)
                lines.append(f"{inner}{tgt} = fz_clip({tgt} + {pre});")
            lines += self.block(bsc, depth + 1, inner)
        lines.append(f"{ind}}}")
        return lines

    def loop(self, kind, sc, depth, ind):
        r = self.rng
        inner = ind + "  "
        lines = []
        if kind == "cxx_for":
            k = self.fresh("k")
            bound = r.choice(["2", "3"] + (["m + 1"] if ("m", 2) in sc.cxx_ints else []))
            body = self.child(sc, loops=sc.loops + ["cxx"], staged_since_loop=False, in_cxx=True,
                              cxx_ints=sc.cxx_ints + [(k, 3)])
            body.cxx_loop = body
            body.guarded = False
            lines.append(f"{ind}for (int {k} = 0; {k} < {bound}; ++{k}) {{")
            lines += self.block(body, depth + 1, inner)
            return lines + [f"{ind}}}"]
        body_changes = dict(loops=sc.loops + ["tensor"], staged_since_loop=False)
        bound = self.loop_bound(sc)
        if kind in ("while", "do"):
            w = self.fresh("w")
            lines.append(f"{ind}ag::Tensor {w} = 0;")
            test = f"{w} < {bound}"
            if self.on("logical") and r.random() < 0.3:
                test += f" {r.choice(['&&', '||'])} {w} < 1" if r.random() < 0.3 else \
                    f" && ({self.cond(sc)})"
            body = self.child(sc, scalars=sc.scalars + [(w, 6)], **body_changes)
            body_lines = [f"{inner}{w} += 1;"] + self.block(body, depth + 1, inner)
            if kind == "while":
                lines += [f"{ind}while ({test}) {{"] + body_lines + [f"{ind}}}"]
            else:
                lines += [f"{ind}do {{"] + body_lines + [f"{ind}}} while ({test});"]
            return lines
        if kind == "for_range":
            i = self.fresh("i")
            rng_expr = r.choice([f"ag::range({bound})", f"ag::range(1, {bound} + 1)",
                                 f"ag::range(0, {bound} + 1, 2)"])
            if self.on("dataset") and self.dataset_rng.random() < 0.3:
                # A C++ bound: a dataset's contents are fixed when it is made.
                rng_expr = (f"ag::data::range({self.dataset_rng.randint(0, 5)})"
                            ".map([](ag::Tensor v) { return ag::cast(v, ag::int32); })")
            body = self.child(sc, scalars=sc.scalars + [(i, 6)], **body_changes)
            lines.append(f"{ind}for (auto {i} : {rng_expr}) {{")
            if self.on("loopvar_assign") and r.random() < 0.3:
                lines.append(f"{inner}{i} = {i} + 1;")
            lines += self.block(body, depth + 1, inner)
            return lines + [f"{ind}}}"]
        # C-style for with a tensor counter; continue still runs the step.
        j = self.fresh("j")
        body = self.child(sc, scalars=sc.scalars + [(j, 6)], **body_changes)
        lines.append(f"{ind}for (ag::Tensor {j} = 0; {j} < {bound}; {j} = {j} + 1) {{")
        lines += self.block(body, depth + 1, inner)
        return lines + [f"{ind}}}"]

    # ---- transposed arrays ---------------------------------------------------
    def array_loop(self, b):
        """A dynamic_rnn-like loop (the "transposed_arrays" feature): lines that
        end with `arB_d`, a scalar digest of what the loop wrote (a local of the
        function: the loop sits at its top, in an `if` or in a loop).

        The common form is what passes/transposed_arrays.cpp and
        exec/plan_views.cpp (keep_rows_in_arrays) rewrite: a static-size array
        written at the counter of a loop over its size with the state that one
        binary op computed from a row of a sequence and the state, read after
        the loop only through one transpose that moves axis 0 alone. A near
        miss breaks one of their conditions. Drawn from arrays_rng only."""
        r = self.arrays_rng
        p = f"ar{b}_"
        steps = r.randint(2, 6)
        row_rank = r.choice([1, 2, 2, 3])
        big = r.random() < 0.8    # rows of more than 16 elements (not flat steps)
        row = list(r.choice({
            (1, True): [(17,), (20,), (24,)], (1, False): [(5,), (12,)],
            (2, True): [(3, 6), (4, 5), (2, 9), (3, 7), (4, 8)], (2, False): [(2, 3), (3, 4), (2, 8)],
            (3, True): [(2, 3, 4), (2, 2, 5), (3, 2, 3)], (3, False): [(2, 2, 2), (2, 2, 3)],
        }[(row_rank, big)]))
        if self.on("large_arrays") and r.random() < 0.25:
            # The array's steps * rows then exceed constant folding's 1,024 zeros.
            row[-1] *= -(-520 // math.prod(row))
        op = r.choice(["+", "-", "*"])
        # "invariant": the same tensor every iteration, not a row.
        read = r.choice(["row", "transposed", "transposed", "gather", "broadcast", "invariant"])
        if read == "broadcast" and not self.on("array_broadcast"):
            read = "row"
        form = r.choice(["range", "range", "range", "while", "for_c"])
        miss = r.choices(["none", "state_read_after", "other_reader", "shorter", "n_bound",
                          "stack_read", "read_after_loop", "two_perms", "perm_stays",
                          "dynamic", "value_differs", "reversed", "two_arrays", "write_in_if"],
                         [14] + [1] * 13)[0]
        place = r.choice(["top", "top", "top", "if", "loop"])

        def dims(shape):
            return "{" + ", ".join(map(str, shape)) + "}"

        def sequence(shape, k, tied):
            return f"fz_sequence(x, {dims(shape)}, {r.randint(1, 9)}, {k}, {str(tied).lower()})"

        # Products keep |state| <= |initial state|: rows in [-1, 1].
        k, tied = (1, False) if op == "*" else (3, r.random() < 0.6)
        lines = []
        at = r.randint(1, row_rank)   # the time axis of a transposed sequence
        length = steps + r.choice([0, 0, 0, 1, 2])  # a sequence may be longer than the loop
        if read == "row":
            lines.append(f"const ag::Tensor {p}seq = {sequence([length] + row, k, tied)};")
            operand = f"{p}seq[{p}i]"
        elif read == "broadcast":   # rows of the state's shape without its first axis
            lines.append(f"const ag::Tensor {p}seq = {sequence([length] + row[1:], k, tied)};")
            operand = f"{p}seq[{p}i]"
        elif read == "invariant":
            lines.append(f"const ag::Tensor {p}w = {sequence(row, k, tied)};")
            operand = f"{p}w"
        else:
            stored = row[:at] + [length] + row[at:]
            lines.append(f"const ag::Tensor {p}seq = {sequence(stored, k, tied)};")
            if read == "gather":
                operand = f"ag::gather({p}seq, {p}i, {at})"
            else:
                to_front = [at] + [d for d in range(row_rank + 1) if d != at]
                lines.append(f"const ag::Tensor {p}xs = ag::transpose({p}seq, {dims(to_front)});")
                operand = f"{p}xs[{p}i]"
        lines.append(f"ag::Tensor {p}s = {sequence(row, 2 if op == '*' else 3, r.random() < 0.6)};")
        if miss == "other_reader":
            lines.append(f"ag::Tensor {p}u = {p}s * 0;")
        size = "0, /*dynamic_size=*/true" if miss == "dynamic" else str(steps)
        lines.append(f"ag::TensorArray {p}a(x.dtype(), {size});")
        if miss == "two_arrays":
            lines.append(f"ag::TensorArray {p}b(x.dtype(), {steps});")
        bound = {"shorter": str(steps - 1), "n_bound": f"ag::minimum(n + 1, {steps})"}.get(miss, str(steps))
        i = f"{p}i"
        body = [f"  {p}s = " + (f"{p}s {op} {operand};" if r.random() < 0.5 else f"{operand} {op} {p}s;")]
        if miss == "other_reader":
            body.append(f"  {p}u = {p}u + {p}s;")
        written = f"{p}s * 2" if miss == "value_differs" else f"{p}s"
        index = f"{steps - 1} - {i}" if miss == "reversed" else i
        if miss == "none" and r.random() < 0.25:
            # How an imported ONNX loop writes at the counter (a position
            # counted from the end when negative): passes/counter_signs.cpp.
            index = f"ag::where({i} < 0, {i} + {steps}, {i})"
        write = f"{p}a = {p}a.write({index}, {written});"
        # In an if in the loop, the branch writes the row into the array's
        # memory (exec/plan_compile.cpp, donated_to_branches).
        body.append(f"  if ({i} % 3 != 1) {{ {write} }}" if miss == "write_in_if" else f"  {write}")
        if miss == "two_arrays":
            body.append(f"  {p}b = {p}b.write({i}, {p}s);")
        if form == "range":
            # An int32 limit (what agc writes for ag::range(5)) or an int64
            # one: the int32 range's counter reaches the write through a cast.
            bound_expr = bound if bound.startswith("ag::") or r.random() < 0.5 else \
                f"ag::Tensor(int64_t{{{bound}}})"
            lines += [f"for (auto {i} : ag::range({bound_expr})) {{"] + body + ["}"]
        elif form == "while":
            lines += [f"ag::Tensor {i} = 0;", f"while ({i} < {bound}) {{"] + body + \
                [f"  {i} = {i} + 1;", "}"]
        else:
            lines += [f"for (ag::Tensor {i} = 0; {i} < {bound}; {i} = {i} + 1) {{"] + body + ["}"]

        def moving_perm():
            perm = list(range(1, row_rank + 1))
            perm.insert(r.randint(1, row_rank), 0)
            if r.random() < 0.2:   # negative axes
                perm = [d - (row_rank + 1) if r.random() < 0.5 else d for d in perm]
            return perm

        perm = moving_perm()
        if miss == "perm_stays":
            # Axis 0 stays in front, or moves with the others reordered.
            perm = [0] + list(range(row_rank, 0, -1)) if row_rank >= 2 and r.random() < 0.5 else \
                list(range(row_rank, -1, -1))
        stacked = f"{p}a.stack()"
        transposed = stacked if r.random() < 0.1 and miss != "perm_stays" else \
            f"ag::transpose({stacked}, {dims(perm)})"
        digest = [f"fz_digest({transposed})"]
        if miss == "state_read_after":
            digest.append(f"fz_digest({p}s)")
        elif miss == "other_reader":
            digest.append(f"fz_digest({p}u)")
        elif miss == "stack_read":
            digest.append(f"fz_digest({stacked})")
        elif miss == "read_after_loop":
            digest.append(f"fz_digest({p}a.read({r.randint(0, steps - 1)}))")
        elif miss == "two_arrays":
            digest.append(f"fz_digest(ag::transpose({p}b.stack(), {dims(moving_perm())}))")
        elif miss == "two_perms":
            other = moving_perm()
            if other == perm:
                other = list(range(row_rank, -1, -1))
            digest.append(f"fz_digest(ag::transpose({stacked}, {dims(other)}))")
        digest = " + ".join(digest)
        d = f"{p}d"
        if place == "top":
            return ["  " + line for line in lines] + [f"  const ag::Tensor {d} = {digest};"]
        head = "if (n > 1) {" if place == "if" else f"for (auto {p}o : ag::range(2)) {{"
        update = f"{d} = {digest};" if place == "if" else f"{d} = {d} + {digest};"
        return ([f"  ag::Tensor {d} = ag::reduce_sum(x) * 0;", f"  {head}"] +
                ["    " + line for line in lines] + [f"    {update}", "  }"])

    # ---- functions -----------------------------------------------------------
    def body(self, sc, ind, budget):
        self.stmt_budget = budget
        self.jumped = False
        lines = []
        while self.stmt_budget > 0:
            lines += self.stmt(sc, 0, ind)
        return lines

    def helper(self):
        name = f"{self.name}_h{len(self.helpers)}"
        sc = Scope()
        sc.data = [("a", CLIP), ("u", CLIP), ("a0", CLIP)]
        sc.assignable = ["a", "u"]
        sc.scalars = [("n", 4)]
        self.in_helper = True
        form = "function"
        if self.on("auto_return"):
            form = self.helper_form_rng.choice(["function", "auto_function", "lambda"])
        header = {"function": f"ag::Tensor {name}(ag::Tensor a, ag::Tensor n) {{",
                  "auto_function": f"auto {name}(ag::Tensor a, ag::Tensor n) {{",
                  "lambda": f"auto {name} = [](ag::Tensor a, ag::Tensor n) {{"}[form]
        lines = [header, "  const ag::Tensor a0 = a;", "  ag::Tensor u = fz_clip(a + n);"]
        lines += self.body(sc, "  ", self.rng.randint(2, 4))
        lines += ["  return fz_clip(a - u);", "};" if form == "lambda" else "}"]
        self.helpers.append((name, lines, form == "lambda"))

    def function(self):
        r = self.rng
        self.in_helper = False
        if self.on("helper"):
            for _ in range(r.randint(0, 2)):
                self.helper()
        self.in_helper = False
        sc = Scope()
        # x0 is never assigned, so every branch has something to read.
        sc.data = [("x", 5), ("x0", 5), ("v0", CLIP), ("v1", CLIP), ("v2", CLIP)]
        sc.assignable = ["x", "v0", "v1", "v2"]
        sc.scalars = [("n", 4)]
        sc.cxx_ints = [("m", 2)]
        if self.method_form:
            sc.cxx_ints.append(("bias_", 2))
        # Lambda helpers are locals of the marked function, defined first.
        lines = ["  " + line for _, hl, is_lambda in self.helpers if is_lambda for line in hl]
        lines += ["  const ag::Tensor x0 = x;", "  ag::Tensor v0 = x;",
                 "  ag::Tensor v1 = fz_clip(x * 2 + 1);",
                 "  ag::Tensor v2 = fz_clip(x - n);"]
        if self.has_rows:
            lines.append("  const ag::Tensor rows = fz_transposed_rows(x);")
        if self.errors_rng:
            lines += self.elementwise_condition()
        result = "v0 + v1 * 3 - v2 * 5"
        if self.has_arrays:
            for b in range(1, self.arrays_rng.choice([1, 1, 2]) + 1):
                lines += self.array_loop(b)
                result += f" + ar{b}_d"
        if self.on("tensor_array") and r.random() < 0.5:
            sc.has_ta = True
            lines += ["  ag::TensorArray ta(x.dtype(), 0, /*dynamic_size=*/true);",
                      "  ta = ta.write(0, x);"]
            result += " + ag::reduce_sum(ta.stack()) + ta.size() * 7"
        lines += self.body(sc, "  ", r.randint(3, 7))
        lines += [f"  return {result};"]
        out = []
        for _, hl, is_lambda in self.helpers:
            if not is_lambda:
                out += hl + [""]
        if not self.method_form:
            return out + [f"AG_FUNCTION ag::Tensor {self.name}({PARAMS}) {{"] + lines + ["}"]
        return out + self.method(lines)

    def elementwise_condition(self):
        """An if on a comparison of x, which is an error when x is not a scalar. Under && or
        ||, the comparison comes first: evaluated in both builds (a staged second operand is
        traced, and checked, even where eager mode short-circuits it)."""
        r = self.errors_rng
        cond = f"x {r.choice(['>', '<', '>=', '<=', '==', '!='])} {r.randint(-2, 2)}"
        if r.random() < 0.4:
            cond = f"({cond}) {r.choice(['&&', '||'])} (n > {r.randint(0, 2)})"
        target = r.choice(["v0", "v1", "v2"])
        return [f"  if ({cond}) {{", f"    {target} = fz_clip({target} + 1);", "  }"]

    def method(self, body):
        """The body as the method `call` of a module class, and what main() calls."""
        form = self.method_form
        cls = f"{self.name}_M"
        static = form.startswith("static")
        const = " const" if form.endswith("const") else ""
        declaration = f"AG_FUNCTION {'static ' if static else ''}ag::Tensor call({PARAMS}){const}"
        out = [f"class {cls} : public ag::Module {{", " public:"]
        if "in_class" in form:
            out += [f"  {declaration} {{"] + ["  " + line for line in body] + ["  }"]
        else:
            out += [f"  {declaration};"]
        member = "static constexpr int" if static else "int"
        out += [" private:", f"  {member} bias_ = {self.bias};", "};"]
        if "out_of_class" in form:
            out += [f"ag::Tensor {cls}::call({PARAMS}){const} {{"] + body + ["}"]
        if static:
            return out
        # main() calls a plain function: one module, called through it.
        return out + [f"static ag::Tensor {self.name}({PARAMS}) {{",
                      f"  static {cls} module;", "  return module.call(x, n, m);", "}"]

    def entry(self):
        """What main() calls, and whether ag::function_of counts its traces."""
        if self.method_form and self.method_form.startswith("static"):
            return f"&{self.name}_M::call", True
        return f"&{self.name}", not self.method_form

    def calls(self):
        """Rows of (dtype, shape, x values, n, m) for main()."""
        r = self.rng
        kinds = INPUT_KINDS if self.on("retrace") else INPUT_KINDS[1:2]
        picked = r.sample(kinds, min(3, len(kinds)))
        picked.append(picked[0])  # the same signature again: a cache hit
        rows = []
        for dtype, shape in picked:
            count = 1
            for d in shape:
                count *= d
            values = [r.randint(-4, 4) for _ in range(count)]
            m = r.randint(0, 2) if self.on("retrace") else 1
            rows.append((dtype, shape, values, r.randint(0, 4), m))
        if self.on("multi_block") and r.random() < 0.4:
            values = [r.randint(-4, 4) for _ in range(MULTI_BLOCK_CYCLE)]
            m = r.randint(0, 2) if self.on("retrace") else 1
            rows.append(("int32", MULTI_BLOCK_SHAPE, values, r.randint(0, 4), m))
        return rows


def generate(seed, indices, features):
    out = ["// Generated by tests/fuzz/gen.py: seed %s, functions %s, features %s." %
           (seed, ",".join(map(str, indices)), ",".join(sorted(features))),
           "#include <ag/ag.h>", "", '#include "harness.h"', "",
           "static ag::Tensor fz_clip(ag::Tensor v) {",
           f"  return ag::minimum(ag::maximum(v, -{CLIP}), {CLIP});", "}", "",
           "// [3, x's shape]: x, x + 1 and 2x - 3 stacked on a new last axis, then",
           "// transposed to the front, as dynamic_rnn reads its input row by row.",
           "static ag::Tensor fz_transposed_rows(ag::Tensor x) {",
           "  std::vector<int64_t> to_front{x.rank()};",
           "  for (int64_t d = 0; d < x.rank(); ++d) to_front.push_back(d);",
           "  return ag::transpose(ag::stack({x, x + 1, x * 2 - 3}, x.rank()), to_front);",
           "}", "",
           "// Row i of them, i wrapped into [0, 3) (% is a floor mod).",
           "static ag::Tensor fz_row(ag::Tensor rows, ag::Tensor i) {",
           "  return rows[i % 3];",
           "}", "",
           "// A `shape` tensor of x's dtype: a pattern in [-k, k] that `salt` varies, plus",
           "// the sum of x when `tied` (a constant otherwise).",
           "static ag::Tensor fz_sequence(ag::Tensor x, std::vector<int64_t> shape, int salt, int k,",
           "                              bool tied) {",
           "  int64_t count = 1;",
           "  for (int64_t d : shape) count *= d;",
           "  ag::Tensor iota = ag::reshape(ag::cast(ag::range(ag::Tensor(count)), x.dtype()), shape);",
           "  ag::Tensor pattern = (iota * salt + salt / 2) % (2 * k + 1) - k;",
           "  return tied ? pattern + ag::reduce_sum(x) : pattern;",
           "}", "",
           "// s repeated to like's shape: ag::broadcast_to where like's dims are known",
           "// while tracing, else a where() that broadcasts s (the unknown_dims calls).",
           "static ag::Tensor fz_spread(ag::Tensor s, ag::Tensor like) {",
           "  const ag::Shape& shape = like.shape();",
           "  if (!shape.is_fully_defined()) return ag::where(ag::zeros_like(like) == 0, s, like);",
           "  return ag::broadcast_to(s, {shape.begin(), shape.end()});",
           "}", "",
           "// v's elements as a 16-channel image [1, n, 1, 16] (NHWC; channel c holds",
           "// v + c) through a 3x1 convolution by weights in {-1, 0, 1}, a per-channel",
           "// bias and the image itself as residual, then relu (variant 0), ReLU6 as",
           "// ONNX's Clip imports (1) or nothing (2): the chain the graph fuses. Its",
           "// largest channel, in v's shape and dtype: exact, the values are small integers.",
           "static ag::Tensor fz_conv(ag::Tensor v, int variant) {",
           "  const ag::DType dtype = v.dtype() == ag::float64 ? ag::float64 : ag::float32;",
           "  ag::Tensor channel = ag::cast(ag::range(ag::Tensor(16)), dtype);",
           "  ag::Tensor image = ag::reshape(ag::cast(v, dtype), {1, -1, 1, 1}) + channel;",
           "  ag::Tensor taps = ag::cast(ag::range(ag::Tensor(3 * 16 * 16)), dtype);",
           "  ag::Tensor w = ag::reshape(taps * 7 % 3 - 1, {3, 1, 16, 16});",
           "  ag::Tensor y = ag::convolution(image, w, {1}, \"SAME\", \"NHWC\") + (channel % 5 - 2) + image;",
           "  if (variant == 0) y = ag::relu(y);",
           "  if (variant == 1) y = ag::minimum(ag::maximum(y, 0), 6);",
           "  return ag::cast(ag::reshape(ag::reduce_max(y, {3}), ag::shape(v)), v.dtype());",
           "}", "",
           "// v's elements as a sequence [1, n, 1] (v / 8) through a recurrent layer of",
           "// 4 units, its weights a pattern in [-0.5, 0.5], over the whole sequence (one",
           "// op): a GRU (variant 0), a GRU without reset_after (1), a tanh RNN (2) or an",
           "// LSTM (3). Each step's first unit times 4, rounded, in v's shape and dtype:",
           "// small integers, the same in both builds because the op's values are.",
           "static ag::Tensor fz_rnn(ag::Tensor v, int variant) {",
           "  const ag::DType dtype = v.dtype() == ag::float64 ? ag::float64 : ag::float32;",
           "  ag::Tensor x = ag::reshape(ag::cast(v, dtype), {1, -1, 1}) / 8;",
           "  const int64_t width = 4 * (variant == 3 ? 4 : variant == 2 ? 1 : 3);",
           "  auto pattern = [&](int64_t rows, int salt) {",
           "    ag::Tensor iota = ag::cast(ag::range(ag::Tensor(rows * width)), dtype);",
           "    return ag::reshape((iota * salt % 11 - 5) / 10, {rows, width});",
           "  };",
           "  const ag::Tensor kernel = pattern(1, 3), recurrent = pattern(4, 7);",
           "  const ag::Tensor h0 = ag::rnn::zero_state(x, 4);",
           "  ag::rnn::RNNOutput out;",
           "  if (variant == 3) {",
           "    out = ag::rnn::lstm(x, {h0, h0}, {kernel, recurrent, {}, {}});",
           "  } else if (variant == 2) {",
           "    out = ag::rnn::simple_rnn(x, {h0}, {kernel, recurrent, {}});",
           "  } else {",
           "    ag::rnn::GRUOptions options;",
           "    options.reset_after = variant == 0;",
           "    out = ag::rnn::gru(x, {h0}, {kernel, recurrent, {}}, options);",
           "  }",
           "  ag::Tensor first = ag::gather(out.outputs, ag::Tensor(int64_t{0}), 2);",
           "  return ag::cast(ag::reshape(ag::round(first * 4), ag::shape(v)), v.dtype());",
           "}", "",
           "// A scalar that any element of t moved or changed changes: t weighted by",
           "// 1..7 along its flat order, summed (exact: t holds small integers). Sizes",
           "// from the graph: a dynamic-size array's stack has an unknown first dim.",
           "static ag::Tensor fz_digest(ag::Tensor t) {",
           "  ag::Tensor iota = ag::cast(ag::range(ag::size(t)), t.dtype());",
           "  return ag::reduce_sum(ag::reshape(t, {-1}) * (iota % 7 + 1));",
           "}", ""]
    cases = []
    for i in indices:
        g = FunctionGen(seed, i, features)
        body = g.function()
        out.append(f"// fz-begin {g.name}")
        out += body
        out.append(f"// fz-end {g.name}")
        out.append("")
        entry, counted = g.entry()
        # A call that fails while tracing leaves no trace to count.
        cases.append((g.name, (entry, counted and not g.errors_rng), g.calls(), g.unknown_dims))
    out.append("static const FzCase fz_cases[] = {")
    for name, (entry, counted), rows, unknown_dims in cases:
        # -1: a method's traces, or a function's that may fail, are not counted.
        traces = len({(d, s, m) for d, s, _, _, m in rows}) if counted else -1
        row_text = ", ".join(
            "{ag::%s, {%s}, {%s}, %d, %d}" % (d, ", ".join(map(str, s)), ", ".join(map(str, v)), n, m)
            for d, s, v, n, m in rows)
        out.append(f"    {{\"{name}\", {entry}, {traces}, {{{row_text}}}, "
                   f"{str(unknown_dims).lower()}}},")
    out += ["};", "", "int main(int argc, char** argv) { return fz_run(fz_cases, argc, argv); }", ""]
    return "\n".join(out)


def parse_features(text):
    """'all', a list of features, or a list of -feature to leave out of all."""
    items = [i.strip() for i in text.split(",") if i.strip() and i.strip() != "all"]
    minus = {i[1:] for i in items if i.startswith("-")}
    plus = {i for i in items if not i.startswith("-")}
    for name in plus | minus:
        if name not in FEATURES:
            sys.exit(f"gen.py: unknown feature '{name}' (known: {', '.join(FEATURES)})")
    return (plus or set(FEATURES)) - minus


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--seed", type=int, required=True)
    p.add_argument("--count", type=int, default=1, help="functions 0..count-1")
    p.add_argument("--only", default="", help="comma-separated function indices instead of --count")
    p.add_argument("--features", default="all",
                   help="'all', a list (if,while,...), or all minus some (-cross_branch,-cxx_jump)")
    p.add_argument("--list-features", action="store_true")
    p.add_argument("-o", "--output", default="-")
    a = p.parse_args()
    if a.list_features:
        for k, v in FEATURES.items():
            print(f"{k:15} {v}")
        return
    indices = [int(i) for i in a.only.split(",")] if a.only else list(range(a.count))
    text = generate(a.seed, indices, parse_features(a.features))
    if a.output == "-":
        sys.stdout.write(text)
    else:
        with open(a.output, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
