export { WEBUI_CHANNEL } from './webuiApi.ts';
export { webuiManifest, webuiPlugin } from './webuiPlugin.ts';
