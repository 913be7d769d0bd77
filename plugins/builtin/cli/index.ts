export { cliPlugin, CLI_CHANNEL, CliSocketBusy, startCli } from './cliPlugin.ts';
export * from './cliWire.ts';
