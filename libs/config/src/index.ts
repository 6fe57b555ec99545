export { ConfigError, defineSetting, loadConfig } from "./config.js";
export type { Setting, SettingKind, SettingsSpec, ConfigOf, WithDefault } from "./config.js";
export {
  BASE64_32_BYTES,
  boolSetting,
  dirSetting,
  enumSetting,
  hostSetting,
  intSetting,
  ipListSetting,
  keySetting,
  mongoUriSetting,
  natsServerSetting,
  pairListSetting,
  portSetting,
  urlSetting,
  writeConcernSetting,
} from "./kinds.js";
export { settings } from "./settings.js";
