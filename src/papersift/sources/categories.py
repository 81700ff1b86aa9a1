"""The categories every source gives, as one vocabulary: codes, readable names and broad fields.

arXiv's codes (cs.LG, hep-th, math.OC) stay as they are. bioRxiv and medRxiv subjects are
'biorxiv/neuroscience', 'medrxiv/infectious_diseases' (sources.biorxiv.category_name);
Crossref's subjects 'crossref/ecology', its journals 'journal/ecology_letters' and, for a work
in neither, its type 'crossref/posted_content' (sources.crossref). Every such code is a
category page, a search filter (`cat:biorxiv/neuroscience`), a follow
(`category:biorxiv/neuroscience`) and so reaches feeds and digests like an arXiv one.
"""

from __future__ import annotations

import re

# arXiv category codes (cs.LG, hep-th, math.OC); ACM/MSC class codes in the data are not pages.
_ARXIV = re.compile(r"^[a-z][a-z\-]*(\.[A-Za-z][A-Za-z\-]*)?$")
# Another source's: its namespace, a slash, a subject in lower case words joined by '_'.
_NAMESPACED = re.compile(r"^(biorxiv|medrxiv|crossref|journal)/[a-z0-9][a-z0-9_\-]{0,119}$")

_NAMES = {
    "cs.AI": "Artificial Intelligence", "cs.CL": "Computation and Language",
    "cs.CV": "Computer Vision", "cs.LG": "Machine Learning", "stat.ML": "Machine Learning (stat)",
    "cs.RO": "Robotics", "cs.IR": "Information Retrieval", "cs.NE": "Neural and Evolutionary Computing",
    "cs.CR": "Cryptography and Security", "cs.SE": "Software Engineering", "cs.HC": "Human-Computer Interaction",
    "cs.GR": "Graphics", "cs.IT": "Information Theory", "cs.MA": "Multiagent Systems",
    "cs.DC": "Distributed Computing", "cs.SD": "Sound", "cs.CY": "Computers and Society",
    "cs.DB": "Databases", "cs.DS": "Data Structures and Algorithms", "cs.GT": "Game Theory",
    "cs.MM": "Multimedia", "cs.NI": "Networking", "cs.PL": "Programming Languages",
    "cs.SI": "Social and Information Networks", "cs.SY": "Systems and Control",
    "eess.IV": "Image and Video Processing", "eess.AS": "Audio and Speech Processing",
    "eess.SP": "Signal Processing", "eess.SY": "Systems and Control (eess)",
    "math.OC": "Optimization and Control", "stat.ME": "Statistical Methodology",
    "q-bio.NC": "Neurons and Cognition", "physics.comp-ph": "Computational Physics",
}
_SERVERS = {"biorxiv": "bioRxiv", "medrxiv": "medRxiv", "crossref": "Crossref",
            "journal": "journal"}
# Words a subject slug loses that its name keeps ('hiv_aids' is 'HIV/AIDS').
_WORDS = {"hiv": "HIV", "aids": "AIDS", "covid": "COVID", "rna": "RNA", "dna": "DNA"}
# arXiv archives (the part before the dot) and other sources' namespaces, by broad field: the
# beats a category index groups its categories under.
_FIELDS = {
    "cs": "Computer science", "eess": "Electrical engineering", "stat": "Statistics",
    "math": "Mathematics", "q-bio": "Life sciences", "q-fin": "Economics and finance",
    "econ": "Economics and finance", "biorxiv": "Life sciences",
    "medrxiv": "Medicine and health", "journal": "Journals", "crossref": "Journals",
}


def is_category(code: str) -> bool:
    """True for a category code of any source (cs.LG, biorxiv/neuroscience, journal/x), False
    for ACM/MSC class codes that some arXiv records carry."""
    return bool(_ARXIV.match(code) or _NAMESPACED.match(code))


def category_name(code: str) -> str | None:
    """'cs.LG' -> 'Machine Learning'; 'biorxiv/animal_behavior_and_cognition' -> 'Animal
    behavior and cognition'; None for an arXiv code without a name here."""
    server, slash, subject = code.partition("/")
    if slash and server in _SERVERS:
        words = [_WORDS.get(w, w) for w in subject.replace("_", " ").split()]
        if server == "medrxiv" and words == ["HIV", "AIDS"]:
            words = ["HIV/AIDS"]
        text = " ".join(words)
        return text[:1].upper() + text[1:] if text else None
    return _NAMES.get(code)


def category_label(code: str) -> str:
    """'cs.LG' -> 'Machine Learning (cs.LG)'; 'biorxiv/neuroscience' -> 'Neuroscience
    (bioRxiv)'; 'journal/ecology_letters' -> 'Ecology letters (journal)'; unknown codes stay
    as they are."""
    name = category_name(code)
    if name is None:
        return code
    server, slash, _ = code.partition("/")
    return f"{name} ({_SERVERS[server]})" if slash and server in _SERVERS else f"{name} ({code})"


def category_field(code: str) -> str:
    """The broad field of a category: 'cs.LG' -> 'Computer science', 'biorxiv/genomics' ->
    'Life sciences', 'medrxiv/oncology' -> 'Medicine and health'; physics' many archives are
    'Physics'."""
    head = code.partition("/")[0] if "/" in code else code.partition(".")[0]
    return _FIELDS.get(head, "Physics" if _ARXIV.match(code) else "Other")
