"""A numbered ``prf:claim`` block, beside sphinx-proof's lemma, proposition and conjecture.

The paper states results of three strengths: proved (lemma, proposition), supported by simulation
only (claim) and open (conjecture). sphinx-proof has no claim type, so this extension registers
one through sphinx-proof's own tables.
"""

from docutils import nodes
from sphinx_proof import directive, domain, proof_type
from sphinx_proof import nodes as proof_nodes


class claim_node(nodes.Admonition, nodes.Element):
    """Docutils node for a claim (rendered like the other sphinx-proof blocks)."""


class ClaimDirective(directive.ElementDirective):
    """``prf:claim``: a statement the source supports by simulation rather than proof."""

    name = "claim"


proof_nodes.NODE_TYPES.setdefault("claim", claim_node)
proof_type.PROOF_TYPES.setdefault("claim", ClaimDirective)
directive.DEFAULT_REALTYP_TO_COUNTERTYP.setdefault("claim", "claim")
domain.ProofDomain.directives.setdefault("claim", ClaimDirective)


def setup(app):
    """Register the extension with Sphinx (sphinx-proof first, then the claim node as numbered)."""
    app.setup_extension("sphinx_proof")  # registers every type in PROOF_TYPES, claim included
    if claim_node not in app.registry.enumerable_nodes:  # sphinx-proof was set up before this import
        handlers = (proof_nodes.visit_enumerable_node, proof_nodes.depart_enumerable_node)
        app.add_enumerable_node(claim_node, "claim", None, html=handlers, latex=handlers)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
