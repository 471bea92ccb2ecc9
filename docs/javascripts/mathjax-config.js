// MathJax 3, bundled with the site (javascripts/mathjax/tex-svg-full.js): typesets the
// \( \) and \[ \] spans that pymdownx.arithmatex marks with the class "arithmatex".
window.MathJax = {
  tex: { inlineMath: [["\\(", "\\)"]], displayMath: [["\\[", "\\]"]], processEscapes: true, processEnvironments: true },
  options: { ignoreHtmlClass: ".*|", processHtmlClass: "arithmatex" },
  svg: { fontCache: "global" }
};
