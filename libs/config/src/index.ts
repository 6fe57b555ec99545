export {
  ConfigError,
  loadConfig,
  intSetting,
  portSetting,
  boolSetting,
  stringSetting,
  optionalStringSetting,
  urlSetting,
  enumSetting,
  pairListSetting,
} from "./config.js";
export type { Setting, SettingsSpec, ConfigOf } from "./config.js";
export { settings } from "./settings.js";
