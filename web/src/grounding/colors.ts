// One color per distinct label, in the order labels first appear, so the same label
// always has the same color within an answer and neighbours differ. The palette is
// saturated enough to stand out on photos; label text is black or white, whichever
// contrasts more.

const PALETTE = [
  "#e6194b",
  "#3cb44b",
  "#4363d8",
  "#f58231",
  "#911eb4",
  "#00a3a3",
  "#f032e6",
  "#9a6324",
  "#808000",
  "#000075",
];

export interface LabelColor {
  fill: string;
  text: string;
}

export function labelColors(labels: string[]): Map<string, LabelColor> {
  const colors = new Map<string, LabelColor>();
  for (const label of labels) {
    if (colors.has(label)) continue;
    const fill = PALETTE[colors.size % PALETTE.length];
    colors.set(label, { fill, text: textColorOn(fill) });
  }
  return colors;
}

/** WCAG relative luminance decides between black and white text. */
export function textColorOn(hex: string): string {
  const channel = (i: number) => {
    const c = parseInt(hex.slice(1 + 2 * i, 3 + 2 * i), 16) / 255;
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  };
  const luminance = 0.2126 * channel(0) + 0.7152 * channel(1) + 0.0722 * channel(2);
  return (luminance + 0.05) / 0.05 > 1.05 / (luminance + 0.05) ? "#000000" : "#ffffff";
}
