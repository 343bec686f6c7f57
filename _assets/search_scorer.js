/*
 * Search ranking and result snippets for the book (issue 25).
 *
 * Sphinx copies this file into language_data.js (config `html_search_scorer`, set by
 * _ext/search_ranking.py), which every page loads right after searchtools.js.
 *
 * Ranking: a reader who types words wants the chapters that discuss them. Sphinx scores a match
 * in an API object's name (11 + 5 for a function) above a match in a chapter's text (5) or title
 * (15), so "kurtosis" or "IPR" listed a dozen functions before the chapters. Here the chapters rank
 * first, then the reference pages (errata, scorecard, claims, notation, ...: they mention every
 * chapter's words), then the API pages' text, then API objects, unless the query
 * looks like code (a dotted or underscored name such as `metrics.ipr` or `excess_kurtosis`), when
 * Sphinx's own order is kept.
 *
 * Snippets: Sphinx shows the page's raw text, so inline math read "\(1/N\)" and the page's own
 * contents list and toolbar came first. Here the text of the article only is used, and each
 * formula is written as readable text (1/N, ξ₀ stays ξ_0, \frac{a}{b} becomes (a)/(b)).
 */

// The Reference part of the table of contents (_toc.yml) other than the API pages.
const REFERENCE_PAGES = /^book\/(errata|scorecard|claims|notation|open_questions|reproducibility|bibliography)(\/|$)/;

var Scorer = {
  // Sphinx's defaults, kept for the parts of the score computed before `score` is applied.
  objNameMatch: 11,
  objPartialMatch: 6,
  objPrio: { 0: 15, 1: 5, 2: -5 },
  objPrioDefault: 0,
  title: 15,
  partialTitle: 7,
  term: 5,
  partialTerm: 2,

  // result: [docname, title, anchor, descr, score, filename]; descr is set for API objects only.
  score: (result) => {
    const [docname, , , descr, score] = result;
    const query = new URLSearchParams(window.location.search).get("q") || "";
    if (/[._]/.test(query)) return score;
    if (descr) return score - 1000;
    if (docname.startsWith("book/api/")) return score - 500;
    // The reference pages (errata, scorecard, claims, notation...) mention every chapter's words; the
    // chapter that is about a word comes first.
    if (REFERENCE_PAGES.test(docname)) return score - 200;
    return score;
  },
};

if (typeof Search !== "undefined") {
  const TEX_SYMBOLS = {
    alpha: "α", beta: "β", gamma: "γ", Gamma: "Γ", delta: "δ", Delta: "Δ", epsilon: "ε",
    varepsilon: "ε", zeta: "ζ", eta: "η", theta: "θ", Theta: "Θ", kappa: "κ", lambda: "λ",
    Lambda: "Λ", mu: "μ", nu: "ν", xi: "ξ", Xi: "Ξ", pi: "π", Pi: "Π", rho: "ρ", sigma: "σ",
    Sigma: "Σ", tau: "τ", phi: "φ", varphi: "φ", Phi: "Φ", chi: "χ", psi: "ψ", Psi: "Ψ",
    omega: "ω", Omega: "Ω", ell: "ℓ", infty: "∞", partial: "∂", nabla: "∇", sum: "Σ", prod: "Π",
    int: "∫", le: "≤", leq: "≤", ge: "≥", geq: "≥", ne: "≠", neq: "≠", approx: "≈", sim: "∼",
    simeq: "≃", equiv: "≡", propto: "∝", times: "×", cdot: "·", cdots: "⋯", ldots: "…",
    dots: "…", pm: "±", mp: "∓", to: "→", rightarrow: "→", mapsto: "↦", in: "∈", notin: "∉",
    subset: "⊂", cup: "∪", cap: "∩", odot: "⊙", otimes: "⊗", top: "⊤", langle: "⟨",
    rangle: "⟩", lvert: "|", rvert: "|", vert: "|", lVert: "‖", rVert: "‖", Vert: "‖",
    mid: "|", forall: "∀", exists: "∃", neg: "¬", land: "∧", lor: "∨", circ: "∘",
    star: "⋆", dagger: "†", prime: "′", min: "min", max: "max", log: "log", exp: "exp",
    sin: "sin", cos: "cos", tanh: "tanh", erf: "erf", sgn: "sgn", det: "det", tr: "tr",
  };

  /** Readable text for a TeX formula: delimiters dropped, symbols as characters, fractions a/b. */
  const readableTex = (tex) => {
    let s = tex.trim();
    s = s.replace(/^\\\(|\\\)$/g, "").replace(/^\\\[|\\\]$/g, "").replace(/^\$+|\$+$/g, "");
    s = s.replace(/\\(left|right|big|Big|bigg|Bigg)\b\\?/g, "");
    // \frac{a}{b} -> (a)/(b), innermost first
    for (let k = 0; k < 5; k += 1) {
      s = s.replace(/\\[dt]?frac\{([^{}]*)\}\{([^{}]*)\}/g, (m, a, b) => {
        const wrap = (x) => (/^(√?[\w.]+|√\([^()]*\))$/.test(x) ? x : `(${x})`);
        return `${wrap(a)}/${wrap(b)}`;
      });
      s = s.replace(/\\[dt]?frac\s*([\w.])\s*([\w.])/g, "$1/$2 ");
      s = s.replace(/\\sqrt\{([^{}]*)\}/g, (m, a) => (/^[\w.]+$/.test(a) ? `√${a}` : `√(${a})`));
    }
    s = s.replace(/\\(mathrm|mathbf|mathit|mathsf|mathcal|mathbb|boldsymbol|bm|text|textrm|operatorname|hat|bar|tilde|vec|overline)\s*/g, "");
    s = s.replace(/\\([A-Za-z]+)/g, (m, name) => (name in TEX_SYMBOLS ? TEX_SYMBOLS[name] : name));
    s = s.replace(/\\[,;:!> ]|\\quad|\\qquad|~/g, " ");
    s = s.replace(/\\\{/g, "{").replace(/\\\}/g, "}").replace(/\\\|/g, "‖");
    s = s.replace(/(?<!\\)[{}]/g, "");
    return s.replace(/\s+/g, " ").trim();
  };

  const pageText = Search.htmlToText;
  Search.htmlToText = (htmlString, anchor) => {
    const doc = new DOMParser().parseFromString(htmlString, "text/html");
    // Keep the article: no toolbar, printed contents list, in-page contents or navigation.
    const noise = [
      ".onlyprint", ".bd-header-article", ".bd-sidebar-secondary", ".prev-next-area",
      "footer", "nav", ".headerlink", "script", "style", "details > summary",
    ];
    noise.forEach((q) => doc.querySelectorAll(q).forEach((el) => el.remove()));
    doc.querySelectorAll(".math, mjx-container").forEach((el) => {
      el.textContent = ` ${readableTex(el.textContent)} `;
    });
    const text = pageText(doc.documentElement.outerHTML, anchor);
    return text.replace(/\s+/g, " ");
  };
}
