"""The one LaTeX cleaner of papersift: arXiv titles, abstracts and author names as readable text (LaTeX to Unicode, hard-wrapped lines joined), and `readable`, what every place that shows text to a reader calls (pages, search snippets, feeds, e-mails, the CLI)."""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

_GREEK = {
    "alpha": "α", "beta": "β", "gamma": "γ", "delta": "δ", "epsilon": "ε", "varepsilon": "ε",
    "zeta": "ζ", "eta": "η", "theta": "θ", "vartheta": "ϑ", "iota": "ι", "kappa": "κ",
    "lambda": "λ", "mu": "μ", "nu": "ν", "xi": "ξ", "pi": "π", "varpi": "ϖ", "rho": "ρ",
    "varrho": "ϱ", "sigma": "σ", "varsigma": "ς", "tau": "τ", "upsilon": "υ", "phi": "φ",
    "varphi": "φ", "chi": "χ", "psi": "ψ", "omega": "ω", "Gamma": "Γ", "Delta": "Δ",
    "Theta": "Θ", "Lambda": "Λ", "Xi": "Ξ", "Pi": "Π", "Sigma": "Σ", "Upsilon": "Υ",
    "Phi": "Φ", "Psi": "Ψ", "Omega": "Ω",
}
_SYMBOLS = {
    "times": "×", "cdot": "·", "cdots": "…", "ldots": "…", "dots": "…", "leq": "≤", "le": "≤",
    "geq": "≥", "ge": "≥", "neq": "≠", "ne": "≠", "approx": "≈", "sim": "~", "simeq": "≃",
    "pm": "±", "mp": "∓", "infty": "∞", "to": "→", "rightarrow": "→", "Rightarrow": "⇒",
    "leftarrow": "←", "leftrightarrow": "↔", "mapsto": "↦", "in": "∈", "notin": "∉",
    "subset": "⊂", "subseteq": "⊆", "cup": "∪", "cap": "∩", "forall": "∀", "exists": "∃",
    "sum": "Σ", "prod": "Π", "int": "∫", "partial": "∂", "nabla": "∇", "ell": "ℓ", "mid": "|",
    "langle": "⟨", "rangle": "⟩", "lfloor": "⌊", "rfloor": "⌋", "lceil": "⌈", "rceil": "⌉",
    "propto": "∝", "ll": "≪", "gg": "≫", "equiv": "≡", "circ": "∘", "star": "⋆", "ast": "*",
    "top": "⊤", "perp": "⊥", "emptyset": "∅", "varnothing": "∅", "neg": "¬", "land": "∧",
    "lor": "∨", "oplus": "⊕", "otimes": "⊗", "odot": "⊙", "sqrt": "√", "prime": "′",
    "degree": "°", "checkmark": "✓", "dagger": "†", "S": "§", "textasciitilde": "~",
    "textgreater": ">", "textless": "<", "log": "log", "exp": "exp", "max": "max", "min": "min",
    "arg": "arg", "sin": "sin", "cos": "cos", "tanh": "tanh", "lim": "lim", "sup": "sup",
    "inf": "inf", "det": "det", "Pr": "Pr", "quad": " ", "qquad": " ", "colon": ":",
    "vert": "|", "Vert": "‖", "lvert": "|", "rvert": "|", "lVert": "‖", "rVert": "‖",
    "backslash": "\\", "textdegree": "°", "circledR": "®", "textregistered": "®", "texttrademark": "™", "textbackslash": "\\", "textendash": "–", "textemdash": "—",
}
_SPACED = set("≤≥≠≈≃→⇒←↔↦∈∉⊂⊆∝≪≫≡∓")
_BLACKBOARD = {"R": "ℝ", "N": "ℕ", "Z": "ℤ", "Q": "ℚ", "C": "ℂ", "E": "𝔼", "P": "ℙ"}
# Commands whose argument is the text to keep.
_KEEP_ARG = (
    "textbf|textit|textsl|emph|texttt|textsc|textrm|textsf|textnormal|textup|textmd|mathrm|"
    "mathbf|mathit|mathsf|mathtt|mathcal|mathscr|mathfrak|boldsymbol|bm|text|mbox|hbox|"
    "underline|overline|operatorname|url|widehat|hat|tilde|widetilde|bar|vec|dot|ddot|"
    "mathnormal|textsuperscript|uppercase|lowercase|smash|mathop|mathbin|mathrel|small|"
    "footnotesize|large|Large|scriptsize|tiny|normalsize"
)
# Commands dropped together with their argument.
_DROP_ARG = "cite|citep|citet|citealp|citeauthor|ref|eqref|autoref|cref|Cref|label|footnote|vspace|hspace|nocite"
_ACCENTS = {
    '"': "\u0308", "'": "\u0301", "`": "\u0300", "^": "\u0302", "~": "\u0303", "=": "\u0304",
    ".": "\u0307", "u": "\u0306", "v": "\u030c", "H": "\u030b", "c": "\u0327", "k": "\u0328",
    "r": "\u030a",
}
_LETTER_CMDS = {"ss": "ß", "o": "ø", "O": "Ø", "ae": "æ", "AE": "Æ", "oe": "œ", "OE": "Œ",
                "aa": "å", "AA": "Å", "l": "ł", "L": "Ł", "i": "ı"}
_SUPER = str.maketrans("0123456789+-=()nixT", "⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁼⁽⁾ⁿⁱˣᵀ")
_SUB = str.maketrans("0123456789+-=()aeoxhklmnpstijruv", "₀₁₂₃₄₅₆₇₈₉₊₋₌₍₎ₐₑₒₓₕₖₗₘₙₚₛₜᵢⱼᵣᵤᵥ")
_SUPER_OK = set("0123456789+-=()nixT")
_SUB_OK = set("0123456789+-=()aeoxhklmnpstijruv")

_BRACED = r"\{((?:[^{}]|\{(?:[^{}]|\{[^{}]*\})*\})*)\}"  # up to three levels of nesting
_RE_ESCAPED_MATH = re.compile(r"\\\$(?!\s)([^$\n]{1,80}?)(?<!\s)\\\$")
_RE_ESCAPED = re.compile(r"\\([%&_#$])")
_RE_ACCENT = re.compile(r"\\([\"'`^~=.]|[uvHckr](?![A-Za-z]))\s*(?:\{\s*([A-Za-z]|\\[ij])\s*\}|([A-Za-z]))")
_RE_ACCENT_GROUP = re.compile(r"\{(\\[\"'`^~=.uvHckr]\s*\{?[A-Za-z]\}?)\}")
_RE_LETTER = re.compile(r"\\(ss|ae|AE|oe|OE|aa|AA|[oOlLi])(?![A-Za-z])\s?")
_RE_HREF = re.compile(r"\\href\s*" + _BRACED + r"\s*" + _BRACED)
_RE_DROP = re.compile(r"\\(?:" + _DROP_ARG + r")\*?\s*(?:\[[^\]]*\]\s*)*" + _BRACED)
_RE_KEEP = re.compile(r"\\(?:" + _KEEP_ARG + r")\*?\s*" + _BRACED)
_RE_OLD_FONT = re.compile(r"\{\\(?:em|bf|it|sl|tt|sc|rm|sf|small|large)\s+([^{}]*)\}")
_RE_BB = re.compile(r"\\mathbb\s*(?:\{\s*([A-Za-z])\s*\}|([A-Za-z]))")
_RE_FRAC = re.compile(r"\\[dt]?frac\s*" + _BRACED + r"\s*" + _BRACED)
_RE_SQRT = re.compile(r"\\sqrt\s*" + _BRACED)
_RE_SCRIPT = re.compile(r"([\^_])\s*(?:" + _BRACED + r"|(\\[A-Za-z]+|[A-Za-z0-9*+\-′]))")
_RE_SIZING = re.compile(r"\\(?:left|right|big|Big|bigg|Bigg|bigl|bigr|Bigl|Bigr)(?![A-Za-z])\s*")
_RE_CMD = re.compile(r"\\([A-Za-z]+)\s?")
_RE_SPACING = re.compile(r"\\[,;:! ]")
_RE_MATH_DELIM = re.compile(r"\$\$?|\\\(|\\\)|\\\[|\\\]")
_RE_TILDE_TIE = re.compile(r"~(?<=\S~)(?=\S)")
_CLOSING = ",.;:!?)]"  # no space before these (spaces are single by then)
_OPENING = "(["        # nor after these
# Patterns open with the character they replace, their lookbehind after it: a pattern that
# opens with a lookbehind is tried at every position of the text (5-20x slower).
_RE_MISSING_SPACE_AFTER_STOP = re.compile(
    r"\.(?:(?<=[a-z]{3}\.)(?=[A-Z][a-z]|(?:A|I) [a-z]|\((?:[ivx]{1,4}|\d|[a-h])\)\s)|"
    r"(?<=[A-Za-z]{3}\.)(?=(?:The|They|Their|This|These|We|Our|It|Its|In|To|Finally|Moreover|"
    r"Furthermore|However|Experiments?|Results?|Extensive|Code)\b))")


def _script(match: re.Match[str]) -> str:
    mark, braced, single = match.group(1), match.group(2), match.group(3)
    body = braced if braced is not None else single
    body = body.strip()
    if body.startswith("\\"):
        name = body[1:]
        body = _GREEK.get(name) or _SYMBOLS.get(name) or name
    allowed, table = (_SUPER_OK, _SUPER) if mark == "^" else (_SUB_OK, _SUB)
    if body and all(ch in allowed for ch in body):
        return body.translate(table)
    if body in ("′", "*", "\\prime"):
        return "′" if body != "*" else "*"
    if len(body) == 1:
        return mark + body
    return f"{mark}({body})" if mark == "^" else f"_{body}"


def _accent(match: re.Match[str]) -> str:
    mark, letter = match.group(1), match.group(2) or match.group(3)
    if letter in ("\\i", "\\j"):
        letter = letter[1]
    return unicodedata.normalize("NFC", letter + _ACCENTS[mark])


def _command(match: re.Match[str]) -> str:
    name = match.group(1)
    spaced = match.group(0).endswith(" ")
    if name in _GREEK:
        return _GREEK[name] + (" " if spaced else "")
    if name in _SYMBOLS:
        value = _SYMBOLS[name]
        # Operator names and relations stand apart from their neighbours ("√n log n", "a ≤ b").
        if (value.isalpha() and len(value) > 1) or value in _SPACED:
            return f" {value} "
        return value + (" " if spaced else "")  # "20° is", "ε = 0.1"
    # Unknown command: keep its name as a word (e.g. a macro for a method name).
    return name + " " if match.group(0).endswith(" ") else name


@lru_cache(maxsize=4096)
def clean_latex(text: str) -> str:
    """An abstract or title as readable text: LaTeX to Unicode, hard-wrapped lines joined.

    `$\\alpha$` -> α, `\\textbf{X}` -> X, `\\cite{..}` dropped, `$O(n^2)$` -> O(n²), `\\%` -> %.
    Idempotent on text without LaTeX; never raises.
    """
    if not text:
        return ""
    s = text.replace("\r", "") if "\r" in text else text
    if "\\" in s or "$" in s or "{" in s:
        s = _latex_to_text(s)
    # (plain text with a caret is not LaTeX we can be sure of; it is left as it is)
    return _tidy_spacing(s)


def _latex_to_text(s: str) -> str:
    """LaTeX commands, math and escapes of a text to Unicode and plain words."""
    # Some abstracts escape their math delimiters: "\$n\$" is math, a lone "\$5" is money.
    s = _RE_ESCAPED_MATH.sub(r"$\1$", s)
    s = _RE_ESCAPED.sub(lambda m: {"%": "\x00P", "&": "\x00A", "_": "\x00U", "#": "\x00H",
                                   "$": "\x00D"}[m.group(1)], s)
    s = s.replace("\\{", "\x00L").replace("\\}", "\x00R")
    s = _RE_ACCENT_GROUP.sub(r"\1", s)
    s = _RE_ACCENT.sub(_accent, s)
    s = _RE_LETTER.sub(lambda m: _LETTER_CMDS[m.group(1)], s)
    s = _RE_HREF.sub(lambda m: m.group(2), s)
    for _ in range(3):  # nested commands: \textbf{\emph{x}}
        before = s
        s = _RE_DROP.sub("", s)
        s = _RE_BB.sub(lambda m: _BLACKBOARD.get(m.group(1) or m.group(2), m.group(1) or m.group(2)), s)
        s = _RE_FRAC.sub(lambda m: f"{m.group(1)}/{m.group(2)}", s)
        s = _RE_SQRT.sub(lambda m: f"√{m.group(1)}" if len(m.group(1)) == 1 else f"√({m.group(1)})", s)
        s = _RE_KEEP.sub(lambda m: m.group(1), s)
        s = _RE_OLD_FONT.sub(lambda m: m.group(1), s)
        if s == before:
            break
    s = _RE_SIZING.sub("", s)
    s = _RE_SPACING.sub(" ", s)
    s = s.replace("\\\\", " ")
    # A pattern that opens with a class or an alternation is tried at every character
    # (~6 ns each, ~10 µs an abstract); one that cannot match is not run.
    if "^" in s or "_" in s:
        s = _RE_SCRIPT.sub(_script, s)
    s = _RE_CMD.sub(_command, s)
    if "$" in s or "\\" in s:
        s = _RE_MATH_DELIM.sub("", s)
    s = s.replace("{", "").replace("}", "")
    s = (s.replace("\x00P", "%").replace("\x00A", "&").replace("\x00U", "_")
         .replace("\x00H", "#").replace("\x00D", "$").replace("\x00L", "{").replace("\x00R", "}"))
    return s


def _tidy_spacing(s: str) -> str:
    """Ties, dashes, quotes and spaces as prose has them: one space between words."""
    # Each step below needs its character: a name or a plain title skips most of them.
    if "~" in s:
        s = _RE_TILDE_TIE.sub(" ", s)
    if "--" in s:
        s = s.replace("---", "—").replace("--", "–")
    if "``" in s or "''" in s:
        s = s.replace("``", "“").replace("''", "”")
    if "\n" in s:  # hard-wrapped lines
        s = s.replace("\n", " ")
    if "  " in s or not s.isprintable() or s[:1] == " " or s[-1:] == " ":
        # (printable: no whitespace but the ASCII space)
        s = " ".join(s.split())  # str.split's whitespace is the regex's \s: one space between words
    # From here every space is single and between two words, so the patterns' spaces are
    # one space each, and str.replace (a C scan) does what a pattern opening with a class
    # does by trying every character: no space before , . ; : ! ? ) ] and none after ( [
    # (one at a time, left to right, as the pattern's matches; dropping a space makes no
    # new pair of these). A pair is looked for only where its mark is: a character is found
    # by memchr, a pair by a scan that stops at every space (~1.5 µs an abstract each).
    if " " in s:
        for mark in _CLOSING:
            if mark in s and " " + mark in s:
                s = s.replace(" " + mark, mark)
        for mark in _OPENING:
            if mark in s and mark + " " in s:
                s = s.replace(mark + " ", mark)
    # A space is missing after , or ; only where one is followed by something else.
    if _unspaced(s, ",") or _unspaced(s, ";"):
        s = _missing_space(s)
    if "." in s:
        s = _RE_MISSING_SPACE_AFTER_STOP.sub(". ", s)
    return s  # no space at either end, none doubled: no whitespace but single spaces


def _unspaced(s: str, mark: str) -> bool:
    """Whether some `mark` of the text is followed by something but a space."""
    count = s.count(mark)
    return count > 0 and count > s.count(mark + " ") + s.endswith(mark)


_LOWER = frozenset("abcdefghijklmnopqrstuvwxyz")
_LETTERS = _LOWER | frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZ")


def _missing_space(s: str) -> str:
    """A space after each , or ; between words ("models,which" -> "models, which"): two
    lowercase letters before the mark, two ASCII letters after. Found with str.find: the
    pattern ([,;])(?<=[a-z]{2}[,;])(?=[A-Za-z]{2}) opens with a class, so it is tried at
    every character (~12 µs an abstract, this ~3)."""
    at: list[int] = []
    for mark in ",;":
        i = s.find(mark, 2)
        while i >= 0:
            if (s[i - 2] in _LOWER and s[i - 1] in _LOWER and s[i + 1:i + 2] in _LETTERS
                    and s[i + 2:i + 3] in _LETTERS):
                at.append(i + 1)
            i = s.find(mark, i + 1)
    if not at:
        return s
    at.sort()
    pieces, last = [], 0
    for cut in at:
        pieces.append(s[last:cut])
        last = cut
    pieces.append(s[last:])
    return " ".join(pieces)


_RE_SPACES = re.compile(r"\s+")


@lru_cache(maxsize=8192)
def _readable(text: str) -> str:
    try:
        return clean_latex(text)  # one-spaced and stripped already
    except Exception:  # a cleaner bug must not take a page or an e-mail down: show the source
        return _RE_SPACES.sub(" ", text).strip()


def readable(text: str | None) -> str:
    """Text as a reader sees it: LaTeX rendered by clean_latex, one-spaced; never raises.
    Cached: the same title shows on many pages, feeds and e-mails."""
    return _readable(text or "")
