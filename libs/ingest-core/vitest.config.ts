import { projectConfig } from "../../vitest.shared.js";

export default projectConfig("ingest-core");
