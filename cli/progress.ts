/** Progress of long work on stderr: at most a line per second (or per 10% when not a TTY). */
export const progressReporter = (label: string, stream: NodeJS.WriteStream = process.stderr) => {
  let lastAt = 0;
  let lastTenth = -1;
  return (position: number, total: number): void => {
    if (total < 10_000) return;
    const now = performance.now();
    const tenth = Math.floor((position / total) * 10);
    const due = stream.isTTY ? now - lastAt >= 1_000 || position === total : tenth > lastTenth;
    if (!due) return;
    lastAt = now;
    lastTenth = tenth;
    stream.write(`${label}: ${position}/${total} events (${Math.floor((position / total) * 100)}%)\n`);
  };
};
