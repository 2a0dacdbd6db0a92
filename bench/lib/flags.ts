/** `--name=value` from this process's arguments (the value may itself hold `=`), or undefined. */
export function arg(name: string): string | undefined {
  return process.argv
    .find((a) => a.startsWith(`--${name}=`))
    ?.split('=')
    .slice(1)
    .join('=');
}
