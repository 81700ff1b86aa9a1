"""Readable names of the arXiv categories most papers here carry."""

from __future__ import annotations

import re

# arXiv category codes (cs.LG, hep-th, math.OC); ACM/MSC class codes in the data are not pages.
_CODE = re.compile(r"^[a-z][a-z\-]*(\.[A-Za-z][A-Za-z\-]*)?$")

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


def category_label(category: str) -> str:
    """'cs.LG' -> 'Machine Learning (cs.LG)'; unknown codes stay as they are."""
    name = _NAMES.get(category)
    return f"{name} ({category})" if name else category


def is_category(code: str) -> bool:
    """True for an arXiv category code, False for ACM/MSC class codes that some records carry."""
    return bool(_CODE.match(code))
