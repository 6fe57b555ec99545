import "./styles.css";
import { startApp } from "./app.js";

startApp(document.getElementById("app")!);
