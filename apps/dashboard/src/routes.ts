import { chartsTab } from "./charts.js";
import { createEndpointPage } from "./endpoint-create.js";
import { settingsTab } from "./endpoint-settings.js";
import { bodyTab } from "./event-body.js";
import { curlTab } from "./curl-export.js";
import { diagnosisTab } from "./diagnosis-tab.js";
import { headersTab } from "./event-headers.js";
import { eventsTab } from "./events-list.js";
import { deliveriesTab } from "./forwarding.js";
import type { EndpointTab, EventTab, PageView } from "./views.js";
import { keysPage } from "./keys-page.js";
import { auditPage } from "./audit-page.js";
import { alertsPage } from "./alerts-page.js";
import { schemasTab } from "./schemas-tab.js";
import { listenersTab } from "./listeners-tab.js";
import { destinationsTab } from "./destinations-tab.js";
import { historyTab } from "./event-history.js";

/**
 * Every view of the dashboard, by where it sits. A new feature's view is one module and one
 * line here: its tab or page, its address and its place in the navigation follow (the first of
 * each list is the default). docs/architecture.md, "The dashboard's views".
 */
export const PAGES: readonly PageView[] = [createEndpointPage, keysPage, auditPage, alertsPage];

export const ENDPOINT_TABS: readonly EndpointTab[] = [eventsTab, chartsTab, destinationsTab, listenersTab, schemasTab, settingsTab];

export const EVENT_TABS: readonly EventTab[] = [bodyTab, headersTab, diagnosisTab, deliveriesTab, historyTab, curlTab];
