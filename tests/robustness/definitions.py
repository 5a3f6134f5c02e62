"""The function definitions of a translation unit's main file, by Clang.

Parses with libclang (libclang-19, which libclang-19-dev brings), through
ctypes: Debian 12 has no Python bindings for Clang 19, and clang's
-ast-dump=json of a file that includes <ag/ag.h> is over a gigabyte. The
walk visits only the main file's namespaces and classes, so it costs no more
than the parse.

  Index(flags).parse(path, text) -> Parsed: .errors, .definitions
"""
import ctypes
import re

LIBCLANG = "/usr/lib/llvm-19/lib/libclang.so"


class _Cursor(ctypes.Structure):
    _fields_ = [("kind", ctypes.c_int), ("xdata", ctypes.c_int), ("data", ctypes.c_void_p * 3)]


class _Location(ctypes.Structure):
    _fields_ = [("ptr_data", ctypes.c_void_p * 2), ("int_data", ctypes.c_uint)]


class _Range(ctypes.Structure):
    _fields_ = [("ptr_data", ctypes.c_void_p * 2), ("begin", ctypes.c_uint), ("end", ctypes.c_uint)]


class _String(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("flags", ctypes.c_uint)]


class _Unsaved(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("contents", ctypes.c_char_p), ("length", ctypes.c_ulong)]


_VISITOR = ctypes.CFUNCTYPE(ctypes.c_int, _Cursor, _Cursor, ctypes.py_object)

# CXCursorKind values (clang-c/Index.h).
_STRUCT, _UNION, _CLASS = 2, 3, 4
_FUNCTION, _NAMESPACE, _METHOD = 8, 22, 21
_CONSTRUCTOR, _DESTRUCTOR, _CONVERSION = 24, 25, 26
_FUNCTION_TEMPLATE, _CLASS_TEMPLATE, _PARTIAL_SPECIALIZATION = 30, 31, 32
_LINKAGE_SPEC = 23
SCOPES = {_STRUCT, _UNION, _CLASS, _NAMESPACE, _CLASS_TEMPLATE, _PARTIAL_SPECIALIZATION, _LINKAGE_SPEC}
FUNCTIONS = {_FUNCTION: "function", _METHOD: "method", _CONSTRUCTOR: "constructor",
             _DESTRUCTOR: "destructor", _CONVERSION: "conversion", _FUNCTION_TEMPLATE: "template"}
_CONTINUE, _RECURSE = 1, 2
_ERROR = 3  # CXDiagnostic_Error; 4 is Fatal


def _load():
    lib = ctypes.CDLL(LIBCLANG)
    signatures = {
        "clang_createIndex": ([ctypes.c_int, ctypes.c_int], ctypes.c_void_p),
        "clang_disposeIndex": ([ctypes.c_void_p], None),
        "clang_parseTranslationUnit2": ([ctypes.c_void_p, ctypes.c_char_p, ctypes.POINTER(ctypes.c_char_p),
                                         ctypes.c_int, ctypes.POINTER(_Unsaved), ctypes.c_uint,
                                         ctypes.c_uint, ctypes.POINTER(ctypes.c_void_p)], ctypes.c_int),
        "clang_disposeTranslationUnit": ([ctypes.c_void_p], None),
        "clang_getTranslationUnitCursor": ([ctypes.c_void_p], _Cursor),
        "clang_visitChildren": ([_Cursor, _VISITOR, ctypes.py_object], ctypes.c_uint),
        "clang_getCursorLocation": ([_Cursor], _Location),
        "clang_getCursorExtent": ([_Cursor], _Range),
        "clang_getRangeStart": ([_Range], _Location),
        "clang_getRangeEnd": ([_Range], _Location),
        "clang_getFile": ([ctypes.c_void_p, ctypes.c_char_p], ctypes.c_void_p),
        "clang_File_isEqual": ([ctypes.c_void_p, ctypes.c_void_p], ctypes.c_int),
        "clang_getExpansionLocation": ([_Location, ctypes.c_void_p, ctypes.POINTER(ctypes.c_uint),
                                        ctypes.POINTER(ctypes.c_uint), ctypes.POINTER(ctypes.c_uint)], None),
        "clang_getSpellingLocation": ([_Location, ctypes.c_void_p, ctypes.POINTER(ctypes.c_uint),
                                       ctypes.POINTER(ctypes.c_uint), ctypes.POINTER(ctypes.c_uint)], None),
        "clang_isCursorDefinition": ([_Cursor], ctypes.c_uint),
        "clang_CXXMethod_isDefaulted": ([_Cursor], ctypes.c_uint),
        "clang_CXXMethod_isDeleted": ([_Cursor], ctypes.c_uint),
        "clang_getCursorSpelling": ([_Cursor], _String),
        "clang_getCursorSemanticParent": ([_Cursor], _Cursor),
        "clang_getCursorLexicalParent": ([_Cursor], _Cursor),
        "clang_equalCursors": ([_Cursor, _Cursor], ctypes.c_uint),
        "clang_getCString": ([_String], ctypes.c_char_p),
        "clang_disposeString": ([_String], None),
        "clang_getNumDiagnostics": ([ctypes.c_void_p], ctypes.c_uint),
        "clang_getDiagnostic": ([ctypes.c_void_p, ctypes.c_uint], ctypes.c_void_p),
        "clang_getDiagnosticSeverity": ([ctypes.c_void_p], ctypes.c_int),
        "clang_formatDiagnostic": ([ctypes.c_void_p, ctypes.c_uint], _String),
        "clang_defaultDiagnosticDisplayOptions": ([], ctypes.c_uint),
        "clang_disposeDiagnostic": ([ctypes.c_void_p], None),
    }
    for name, (args, result) in signatures.items():
        function = getattr(lib, name)
        function.argtypes, function.restype = args, result
    return lib


_lib = None


def _string(cx):
    text = _lib.clang_getCString(cx)
    _lib.clang_disposeString(cx)
    return text.decode("utf-8", "replace") if text else ""


def _offset(location, spelling=False):
    """(line, offset) of a location: where the macro was used, or spelt."""
    line, column, offset = ctypes.c_uint(), ctypes.c_uint(), ctypes.c_uint()
    where = _lib.clang_getSpellingLocation if spelling else _lib.clang_getExpansionLocation
    where(location, None, ctypes.byref(line), ctypes.byref(column), ctypes.byref(offset))
    return line.value, offset.value


def _file(location):
    """The file a location is in, a macro's use standing for its expansion."""
    file = ctypes.c_void_p()
    _lib.clang_getExpansionLocation(location, ctypes.byref(file), None, None, None)
    return file


class Definition:
    """One function definition of the main file: where a mark goes, its lines."""

    def __init__(self, name, kind, mark_offset, lines, name_line):
        self.name = name              # qualified, as the reports name it
        self.kind = kind              # FUNCTIONS' values
        self.mark_offset = mark_offset  # where AG_FUNCTION is inserted
        self.first_line, self.end_line = lines  # its template header to its closing brace
        self.name_line = name_line    # the line of the declarator's name

    def __repr__(self):
        return f"{self.kind} {self.name} (line {self.name_line})"


class Parsed:
    def __init__(self, errors, definitions):
        self.errors = errors            # formatted error diagnostics
        self.definitions = definitions  # [Definition], in file order


class Index:
    """A libclang index with the compiler flags every parse uses."""

    def __init__(self, flags):
        global _lib
        if _lib is None:
            _lib = _load()
        self.flags = [f.encode() for f in flags]
        self.index = _lib.clang_createIndex(0, 0)

    def parse(self, path, text):
        """Parses `text` as the file `path` (which need not exist)."""
        args = (ctypes.c_char_p * len(self.flags))(*self.flags)
        data = text.encode()
        unsaved = _Unsaved(path.encode(), data, len(data))
        tu = ctypes.c_void_p()
        code = _lib.clang_parseTranslationUnit2(self.index, path.encode(), args, len(self.flags),
                                                ctypes.byref(unsaved), 1, 0, ctypes.byref(tu))
        if code != 0:
            return Parsed([f"libclang could not parse {path} (error {code})"], [])
        try:
            return Parsed(_errors(tu), _definitions(tu, path, text))
        finally:
            _lib.clang_disposeTranslationUnit(tu)


def _errors(tu):
    found = []
    options = _lib.clang_defaultDiagnosticDisplayOptions()
    for i in range(_lib.clang_getNumDiagnostics(tu)):
        diagnostic = _lib.clang_getDiagnostic(tu, i)
        if _lib.clang_getDiagnosticSeverity(diagnostic) >= _ERROR:
            found.append(_string(_lib.clang_formatDiagnostic(diagnostic, options)))
        _lib.clang_disposeDiagnostic(diagnostic)
    return found


def _qualified_name(cursor):
    parts = []
    while cursor.kind in SCOPES or cursor.kind in FUNCTIONS:
        parts.append(_string(_lib.clang_getCursorSpelling(cursor)) or "(anonymous)")
        cursor = _lib.clang_getCursorSemanticParent(cursor)
    return "::".join(reversed(parts))


def _definitions(tu, path, text):
    found = []
    data = text.encode()
    main_file = _lib.clang_getFile(tu, path.encode())

    def visit(cursor, parent, _):
        if not _lib.clang_File_isEqual(_file(_lib.clang_getCursorLocation(cursor)), main_file):
            return _CONTINUE
        if cursor.kind in SCOPES:
            return _RECURSE
        if cursor.kind in FUNCTIONS and _is_written_definition(cursor):
            definition = _definition(cursor, text, data)
            if definition:
                found.append(definition)
        return _CONTINUE

    visitor = _VISITOR(visit)
    _lib.clang_visitChildren(_lib.clang_getTranslationUnitCursor(tu), visitor, None)
    return found


def _is_written_definition(cursor):
    """A definition with a body the user wrote: not `= default` or `= delete`."""
    if not _lib.clang_isCursorDefinition(cursor):
        return False
    return not (_lib.clang_CXXMethod_isDefaulted(cursor) or _lib.clang_CXXMethod_isDeleted(cursor))


def _is_templated(cursor):
    """A function template, or a member of a class template defined outside it:
    its declaration starts with a template header."""
    if cursor.kind == _FUNCTION_TEMPLATE:
        return True
    lexical = _lib.clang_getCursorLexicalParent(cursor)
    scope = _lib.clang_getCursorSemanticParent(cursor)
    if _lib.clang_equalCursors(lexical, scope):
        return False
    while scope.kind in SCOPES:
        if scope.kind in (_CLASS_TEMPLATE, _PARTIAL_SPECIALIZATION):
            return True
        scope = _lib.clang_getCursorSemanticParent(scope)
    return False


def _definition(cursor, text, data):
    """The Definition of a function cursor, or None when a macro writes its name."""
    name_location = _lib.clang_getCursorLocation(cursor)
    name_line, name_offset = _offset(name_location)
    if _offset(name_location, spelling=True)[1] != name_offset:
        return None  # declared by a macro: there is no place of its own to mark
    extent = _lib.clang_getCursorExtent(cursor)
    first_line, begin = _offset(_lib.clang_getRangeStart(extent))
    end_line, _ = _offset(_lib.clang_getRangeEnd(extent))
    begin = len(data[:begin].decode("utf-8", "replace"))  # Clang counts bytes, Python characters
    mark = mark_offset(text, begin, _is_templated(cursor))
    if mark is None:
        return None
    return Definition(_qualified_name(cursor), FUNCTIONS[cursor.kind], mark, (first_line, end_line),
                      name_line)


_TOKEN = re.compile(r"\s+|//[^\n]*|/\*.*?\*/|\[\[|\]\]|>>|\w+|.", re.S)


_MACRO = re.compile(r"[A-Z][A-Z0-9]*_[A-Z0-9_]*$")


def mark_offset(text, begin, templated):
    """Where AG_FUNCTION goes in a declaration starting at `begin`: after its
    template headers, directives, attributes and macros (FMT_CONSTEXPR,
    FMT_NODISCARD: specifiers or attributes, which a GNU attribute may follow
    but not precede), before the rest of its specifiers. None when the
    declaration is a template whose header a macro spells: no place to mark."""
    token, start, end = _next_token(text, begin)
    if templated and token != "template":
        return None
    while token:
        if token == "#":
            end = _line_end(text, start)
        elif token in _GROUPS:
            end = _skip_group(text, end if token != "[[" else start, token)
        elif _MACRO.match(token):
            following, _, after = _next_token(text, end)
            if following == "(":
                end = _skip_group(text, end, "(")
        else:
            return start
        if end is None:
            return None
        token, start, end = _next_token(text, end)
    return None


def _line_end(text, pos):
    """The end of a directive's line, its continuations included."""
    while True:
        newline = text.find("\n", pos)
        if newline < 0:
            return len(text)
        if not text[:newline].rstrip("\r").endswith("\\"):
            return newline + 1
        pos = newline + 1


def _next_token(text, pos):
    """(token, its start, its end) of the first token at or after `pos`."""
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        token = m.group(0)
        if not (token.isspace() or token.startswith("//") or token.startswith("/*")):
            return token, pos, m.end()
        pos = m.end()
    return "", pos, pos


_GROUPS = {"template": ("<", ">"), "[[": ("[[", "]]"), "__attribute__": ("(", ")"), "(": ("(", ")")}


def _skip_group(text, pos, kind):
    """The offset past the group of `kind` that opens at `pos`: a template
    header's <...>, an attribute's [[...]] or ((...)), a macro's (...); None
    when it does not close."""
    opening, closing = _GROUPS[kind]
    token, _, pos = _next_token(text, pos)
    if token != opening:
        return None
    depth, nesting = 1, 0  # nesting: other parentheses, brackets and braces inside
    while depth > 0:
        token, _, pos = _next_token(text, pos)
        if not token:
            return None
        if token in ("(", "[", "{") and token != opening:
            nesting += 1
        elif token in (")", "]", "}") and token != closing:
            nesting -= 1
        elif nesting == 0 and token == opening:
            depth += 1
        elif nesting == 0 and token == closing:
            depth -= 1
        elif nesting == 0 and closing == ">" and token == ">>":
            depth -= 2
    return pos
