//! SVG plots for reports (in progress).
