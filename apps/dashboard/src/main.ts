// First: zod must be told before any schema exists, and the bundle runs modules in this order.
import "./zod-jitless.js";
import "./styles.css";
import { startApp } from "./app.js";

startApp(document.getElementById("app")!);
