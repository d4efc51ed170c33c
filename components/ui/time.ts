const rtf = new Intl.RelativeTimeFormat("en", { numeric: "auto" });

export function relativeTime(d: Date | string, now = Date.now()): string {
  const diff = (new Date(d).getTime() - now) / 1000;
  const abs = Math.abs(diff);
  if (abs < 45) return "just now";
  if (abs < 3600) return rtf.format(Math.round(diff / 60), "minute");
  if (abs < 86400) return rtf.format(Math.round(diff / 3600), "hour");
  if (abs < 86400 * 30) return rtf.format(Math.round(diff / 86400), "day");
  return new Date(d).toLocaleDateString();
}

export { formatDuration as duration } from "@/lib/display";
