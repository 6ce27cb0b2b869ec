"""Tools for looking at tokenizers, as ``tokenizers.tools``: :class:`EncodingVisualizer` draws how a
tokenizer cuts a text as HTML (in a notebook, or as a string), with :class:`Annotation` spans.

The markup is that of ``tokenizers.tools.EncodingVisualizer``, element for element: runs of characters
of one token and one annotation as ``<span class="token even-token|odd-token">`` (``multi-token`` where
several tokens share a character, ``special-token`` with ``data-stok`` for tokens whose text contains
"unk" or "oov"), ``<span class="non-token">`` for text no token covers, annotations as
``<span class="annotation" data-label=...>``, inside ``<div class="tokenized-text">``; the style sheet
is tokenkit's. It is drawn in Rust (``tokenkit::tools::visualizer``), as ``tokenkit viz`` draws its pages.
"""
from typing import Any, Callable, Dict, List, Optional

from .._tokenkit import label_colors as _label_colors
from .._tokenkit import render_tokens_html as _render

__all__ = ["Annotation", "EncodingVisualizer"]


class Annotation:
    """A labelled character range ``[start, end)`` of the text."""

    start: int
    end: int
    label: str

    def __init__(self, start: int, end: int, label: str):
        self.start = start
        self.end = end
        self.label = label

    def __repr__(self) -> str:
        return f"Annotation(start={self.start}, end={self.end}, label={self.label!r})"


def _html_display():
    try:
        from IPython.display import HTML, display  # type: ignore[attr-defined]
    except ImportError:
        try:
            from IPython.core.display import HTML, display  # type: ignore[attr-defined]
        except ImportError:
            raise ImportError(
                "IPython is needed to show the HTML in a notebook; outside one, pass "
                "default_to_notebook=False to get the HTML string.") from None
    return HTML, display


class EncodingVisualizer:
    """Shows how ``tokenizer`` cuts texts.

    Args:
        tokenizer: a ``tokenkit.Tokenizer`` (or any object whose ``encode(text)`` returns an
            encoding with ``ids``, ``tokens`` and ``token_to_chars``).
        default_to_notebook: show the HTML in the notebook (needs IPython) instead of returning it.
        annotation_converter: turns each annotation given to the call into an :class:`Annotation`.
    """

    def __init__(self, tokenizer: Any, default_to_notebook: bool = True,
                 annotation_converter: Optional[Callable[[Any], Annotation]] = None):
        if default_to_notebook:
            _html_display()
        self.tokenizer = tokenizer
        self.default_to_notebook = default_to_notebook
        self.annotation_converter = annotation_converter

    def __call__(self, text: str, annotations: Optional[List[Any]] = None,
                 default_to_notebook: Optional[bool] = None) -> Optional[str]:
        """The HTML of ``text`` cut into tokens, with ``annotations``: shown in the notebook
        (returns ``None``) or returned as a string, by ``default_to_notebook`` (this call's, else
        the visualizer's)."""
        notebook = self.default_to_notebook if default_to_notebook is None else default_to_notebook
        if notebook:
            HTML, display = _html_display()
        annotations = list(annotations or [])
        if self.annotation_converter is not None:
            annotations = [self.annotation_converter(a) for a in annotations]
        encoding = self.tokenizer.encode(text)
        tokens = [(i, t, encoding.token_to_chars(k), False, False)
                  for k, (i, t) in enumerate(zip(encoding.ids, encoding.tokens))]
        html = _render(text, tokens, [(a.start, a.end, a.label) for a in annotations])
        if notebook:
            display(HTML(html))
            return None
        return html

    @staticmethod
    def calculate_label_colors(annotations: List[Annotation]) -> Dict[str, str]:
        """The colour of each label (HSL), the same for the same set of labels."""
        return dict(_label_colors([a.label for a in annotations]))
