const FORMAT: Intl.DateTimeFormatOptions = { dateStyle: "medium", timeStyle: "short" };

/** A timestamp from the API, drawn in the reader's locale and time zone. */
export function DateTime({ iso }: { iso: string }) {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return <span>{iso}</span>;
  return (
    <time dateTime={iso} title={iso}>
      {date.toLocaleString(undefined, FORMAT)}
    </time>
  );
}
