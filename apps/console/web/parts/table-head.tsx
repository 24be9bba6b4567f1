/** A table's name for screen readers and its column headers; a false column (a hidden action) is left out. */
export function TableHead({ caption, columns }: { caption: string; columns: (string | false)[] }) {
  return (
    <>
      <caption class="sr-only">{caption}</caption>
      <thead>
        <tr>
          {columns
            .filter((column): column is string => column !== false)
            .map((column) => (
              <th key={column} scope="col">
                {column}
              </th>
            ))}
        </tr>
      </thead>
    </>
  );
}
