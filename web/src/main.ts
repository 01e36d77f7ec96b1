import "./styles.css";
import { App } from "./app";
import { openStore } from "./storage/conversation_store";

void openStore().then((store) => new App(store).start());
