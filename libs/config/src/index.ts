export { ConfigError, defineSetting, loadConfig } from "./config.js";
export type { Setting, SettingKind, SettingOptions, SettingsSpec, ConfigOf, WithDefault } from "./config.js";
export {
  BASE64_32_BYTES,
  boolSetting,
  dirSetting,
  enumSetting,
  fileSetting,
  hostSetting,
  intSetting,
  ipListSetting,
  keySetting,
  mongoUriSetting,
  natsServerSetting,
  pairListSetting,
  portSetting,
  tokenSetting,
  urlSetting,
  writeConcernSetting,
} from "./kinds.js";
export { settings } from "./settings.js";
export { ensurePrivateDir, ensurePrivateFile, PRIVATE_DIR_MODE, PRIVATE_FILE_MODE } from "./private-files.js";
