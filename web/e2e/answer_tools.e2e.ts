// What a person does with answers and images beyond asking: write an answer again and
// edit an earlier question (each a version to switch back to), continue an answer cut off
// at the length limit, copy a code block, ask for JSON, open an image large, pick GIF and
// BMP files, and find the suggestions that scroll off a phone.
// Answers are canned where their words matter; the server is real.
import type { Locator, Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { ACCEPT_ATTRIBUTE } from "../src/images/formats";
import { VIDEO_ACCEPT_ATTRIBUTE, VIDEO_FORMAT_NAMES } from "../src/videos/formats";
import { PHONE } from "./browser";
import { cannedAnswers, slowAnswer } from "./canned";
import { bmpFile, gifFile } from "./image_files";
import { answers, ask, PHOTO, pickWithCamera, recordChatRequests, setMaxTokens, waitForAnswer } from "./page_driver";
import { pageSuite } from "./suite";

const suite = pageSuite();
const openPage = suite.openPage;

function lastUserText(body: { messages: { role: string; content: unknown }[] }): unknown {
  const content = body.messages.at(-1)?.content;
  return Array.isArray(content) ? content.at(-1)?.text : content;
}

/** An answer's details, by label. */
async function answerFigures(answer: Locator): Promise<Record<string, string>> {
  const rows = await answer.locator(".stats dt, .stats dd").allTextContents();
  return Object.fromEntries(rows.flatMap((text, i) => (i % 2 ? [] : [[text, rows[i + 1]]])));
}

/**
 * Opens the question editor of `scope` and returns its text box once the editor has
 * taken the focus: it moves the caret to the end a frame after it opens, and a fill
 * before that frame had its selected text put back before what it typed.
 */
async function editQuestion(scope: Page | Locator): Promise<Locator> {
  await scope.getByRole("button", { name: "Edit the question" }).click();
  const box = scope.getByRole("textbox", { name: "Your question, edited" });
  await expect.poll(() => box.evaluate((el) => el === document.activeElement)).toBe(true);
  return box;
}

/** The questions and answers shown, in order. */
function shownTexts(page: Page): Promise<string[]> {
  return page.locator("article.message.user .message-text, article.message.assistant .markdown").allInnerTexts();
}

describe("answers and questions", () => {
  it("keeps every answer written again and every edited question as versions to switch between", async () => {
    const page = await openPage(PHONE);
    const requests = recordChatRequests(page);
    await cannedAnswers(page, [
      "First answer.",
      "Second answer.",
      "About the colour.",
      "In short: a photo.",
      "Welcome.",
    ]);
    await pickWithCamera(page, [PHOTO()]);
    await ask(page, "What is this?");
    await waitForAnswer(page);
    expect(await shownTexts(page)).toEqual(["What is this?", "First answer."]);

    await page.getByRole("button", { name: "Regenerate the answer" }).click();
    await waitForAnswer(page, 60_000, "Second answer.");
    expect(await answers(page).count()).toBe(1);
    expect(requests[1].messages).toEqual(requests[0].messages);
    const answerVersions = answers(page).last().getByRole("group", { name: "Version 2 of 2 of this answer" });
    expect(await answerVersions.innerText()).toBe("2 / 2");
    // Within a phone's width, and by keyboard: the focus stays on the switcher.
    const box = await answerVersions.boundingBox();
    expect(box!.x + box!.width).toBeLessThanOrEqual(PHONE.width);
    await page.getByRole("button", { name: "Show the previous version of this answer" }).focus();
    await page.keyboard.press("Enter");
    expect(await shownTexts(page)).toEqual(["What is this?", "First answer."]);
    expect(await page.evaluate(() => document.activeElement?.getAttribute("aria-label"))).toBe(
      "Show the next version of this answer",
    );
    await page.keyboard.press("Enter");
    expect(await shownTexts(page)).toEqual(["What is this?", "Second answer."]);

    await ask(page, "And the colour?");
    await waitForAnswer(page);
    expect(await page.getByRole("button", { name: "Edit the question" }).count()).toBe(2);
    expect(await page.getByRole("button", { name: "Regenerate the answer" }).count()).toBe(2);

    // An earlier question edited: sent with what came before it only, as a new branch.
    const first = page.locator("article.message.user").first();
    const editBox = await editQuestion(first);
    expect(await editBox.inputValue()).toBe("What is this?");
    await editBox.fill("Never mind");
    await editBox.press("Escape");
    expect(await first.locator(".message-text").innerText()).toBe("What is this?");
    expect(requests).toHaveLength(3);
    await editQuestion(first);
    await editBox.fill("What is it, in short?");
    await editBox.press("Enter");
    await waitForAnswer(page, 60_000, "In short: a photo.");
    expect(await shownTexts(page)).toEqual(["What is it, in short?", "In short: a photo."]);
    expect(requests[3].messages).toHaveLength(1);
    expect(lastUserText(requests[3])).toBe("What is it, in short?");
    expect(JSON.stringify(requests[3].messages[0].content)).toContain("image_url");
    const questionVersions = page.getByRole("group", { name: "Version 2 of 2 of this question" });
    expect(await questionVersions.innerText()).toBe("2 / 2");

    await page.getByRole("button", { name: "Show the previous version of this question" }).click();
    const original = ["What is this?", "Second answer.", "And the colour?", "About the colour."];
    expect(await shownTexts(page)).toEqual(original);

    // Kept across a reload, on the branch shown; a follow-up carries that branch only.
    await page.reload();
    await page.locator("article.message.user").last().waitFor();
    expect(await shownTexts(page)).toEqual(original);
    await page.getByRole("button", { name: "Show the next version of this question" }).click();
    expect(await shownTexts(page)).toEqual(["What is it, in short?", "In short: a photo."]);
    await page.getByRole("button", { name: "Show the previous version of this question" }).click();
    await ask(page, "Thanks.");
    await waitForAnswer(page);
    expect(
      requests[4].messages.map((m) => (typeof m.content === "string" ? m.content : lastUserText({ messages: [m] }))),
    ).toEqual([...original, "Thanks."]);

    // Every request of the conversation carries its id; a new conversation has another.
    const sessionIds = requests.headers.map((headers) => headers["x-session-id"]);
    expect(new Set(sessionIds).size).toBe(1);
    expect(sessionIds[0]).toMatch(/^[0-9a-f]{32}$/);
    await page.getByRole("button", { name: "New conversation" }).click();
    await cannedAnswers(page, ["Hello."]);
    await ask(page, "Hi");
    await waitForAnswer(page);
    expect(requests.headers.at(-1)?.["x-session-id"]).toMatch(/^[0-9a-f]{32}$/);
    expect(requests.headers.at(-1)?.["x-session-id"]).not.toBe(sessionIds[0]);
  });

  it("continues an answer cut off at the length limit into the same answer, and stops a continuation", async () => {
    const page = await openPage();
    const requests = recordChatRequests(page);
    await cannedAnswers(page, [
      { text: "The primary colours are red,", cutOff: true },
      { text: " yellow", cutOff: true },
    ]);
    await ask(page, "Name the primary colours.");
    await waitForAnswer(page);
    const answer = answers(page).last();
    const continueButton = answer.getByRole("button", { name: "Continue the answer" });
    expect(await answer.locator(".answer-flag").innerText()).toBe("Cut off at the length limit (see Settings)");

    // From the keyboard: the stop button takes the focus while it writes, then the question box.
    await continueButton.focus();
    await page.keyboard.press("Enter");
    await waitForAnswer(page, 60_000, "The primary colours are red, yellow");
    expect(requests[1].continue_final_message).toBe(true);
    expect(requests[1].add_generation_prompt).toBe(false);
    expect(requests[1].messages).toEqual([
      ...requests[0].messages,
      { role: "assistant", content: "The primary colours are red," },
    ]);
    expect(await answers(page).count()).toBe(1);
    expect(await answer.getByRole("group", { name: /^Version/ }).count()).toBe(0);
    await expect.poll(() => page.evaluate(() => document.activeElement?.id)).toBe("prompt");
    // Cut off again: offered again. Its details count both parts (64 tokens each, canned).
    expect(await answer.locator(".answer-flag").innerText()).toBe("Cut off at the length limit (see Settings)");
    const twoParts = await answerFigures(answer);
    expect(twoParts["Answer tokens"]).toBe("128 (64 + 64 continued)");
    expect(twoParts["Continued"]).toBe("once; the timings below are the continuation's");

    // Stopped before any new text: still cut off, as it was.
    await slowAnswer(page, " and blue.", 5000);
    await continueButton.click();
    await page.getByRole("button", { name: "Stop the answer" }).click();
    await waitForAnswer(page);
    expect(await answer.locator(".markdown").innerText()).toBe("The primary colours are red, yellow");
    expect(await answer.locator(".answer-flag").innerText()).toBe("Cut off at the length limit (see Settings)");
    expect(await answerFigures(answer)).toEqual(twoParts);

    const rest = ` and blue.${" Mixed, they make other colours.".repeat(8)}`;
    await slowAnswer(page, rest, 150);
    await continueButton.click();
    await page.waitForFunction(() => {
      const text = document.querySelector("article.message.assistant .markdown")?.textContent ?? "";
      return text.startsWith("The primary colours are red, yellow and");
    });
    expect(await answer.getAttribute("aria-busy")).toBe("true");
    expect(await continueButton.count()).toBe(0);
    await page.getByRole("button", { name: "Stop the answer" }).click();
    await waitForAnswer(page);
    expect(await answer.locator(".answer-flag").innerText()).toBe("Stopped");
    expect(await continueButton.count()).toBe(0);
    const stopped = await answer.locator(".markdown").innerText();
    expect(stopped).toMatch(/^The primary colours are red, yellow and/);
    expect(stopped.length).toBeLessThan(`The primary colours are red, yellow${rest}`.length);
    // Stopped before the server's usage: the page counted the last part.
    const threeParts = (await answerFigures(answer))["Answer tokens"];
    const threeRow = /^about (\d+) \(64 \+ 64 \+ (\d+) continued, partly counted by the page\)$/;
    expect(threeParts).toMatch(threeRow);
    const [, total, last] = threeRow.exec(threeParts)!;
    expect(Number(total)).toBe(128 + Number(last));

    await page.reload();
    await answer.waitFor();
    expect(await answer.locator(".markdown").innerText()).toBe(stopped);
    expect((await answerFigures(answer))["Answer tokens"]).toBe(threeParts);
  });

  it("continues the model's own cut-off answer, which the server writes on from", async () => {
    const page = await openPage();
    const requests = recordChatRequests(page);
    await setMaxTokens(page, 4);
    await ask(page, "Count to ten.");
    await waitForAnswer(page);
    const answer = answers(page).last();
    expect(await answer.locator(".answer-flag").innerText()).toBe("Cut off at the length limit (see Settings)");
    const first = await answerFigures(answer);
    expect(first["Answer tokens"]).toBe("4");

    await answer.getByRole("button", { name: "Continue the answer" }).click();
    await expect.poll(() => requests.length).toBe(2);
    await waitForAnswer(page);
    expect(await answer.locator(".answer-error").isHidden()).toBe(true);
    expect(requests[1].messages.at(-1)?.role).toBe("assistant");
    expect(await answers(page).count()).toBe(1);
    // The continuation's prompt holds the answer so far; the answer's tokens are both parts'.
    const continued = await answerFigures(answer);
    expect(Number(continued["Prompt tokens"].split(" ")[0])).toBeGreaterThan(
      Number(first["Prompt tokens"].split(" ")[0]),
    );
    const twoRow = /^(\d+) \(4 \+ (\d+) continued\)$/;
    expect(continued["Answer tokens"]).toMatch(twoRow);
    const [, total, added] = twoRow.exec(continued["Answer tokens"])!;
    expect(Number(added)).toBeGreaterThan(0);
    expect(Number(total)).toBe(4 + Number(added));
  });

  it("copies a code block, and the model's own HTML gets no controls", async () => {
    const page = await openPage();
    await suite.browser().context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: suite.url() });
    const code = "for x in range(3):\n    print(x < 2)";
    await cannedAnswers(page, [
      `Here:\n\n\`\`\`python\n${code}\n\`\`\`\n\n<button onclick="document.title='owned'">Copy code</button>`,
    ]);
    await ask(page, "Write a loop.");
    await waitForAnswer(page);
    const answer = answers(page).last();
    expect(await answer.locator("button").evaluateAll((nodes) => nodes.map((n) => n.className))).toEqual([
      "icon-button small code-copy",
      "icon-button small",
      "icon-button small answer-regenerate",
    ]);
    expect(await answer.locator("[onclick]").count()).toBe(0);
    await answer.getByRole("button", { name: "Copy code" }).click();
    await answer.getByRole("button", { name: "Copied" }).waitFor();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(`${code}\n`);
    expect(await page.title()).not.toBe("owned");
  });

  it("asks for JSON with the JSON suggestion and shows the answer as a JSON block", async () => {
    const page = await openPage();
    const requests = recordChatRequests(page);
    await cannedAnswers(page, ['{"vendor":"ACME","total":12.5}', '{"vendor":"ACME"}', "Vendor: ACME"]);
    await pickWithCamera(page, [PHOTO()]);
    await page.getByRole("button", { name: "JSON", exact: true }).click();
    await waitForAnswer(page);
    expect(requests[0].response_format).toEqual({ type: "json_object" });
    expect(lastUserText(requests[0])).toBe("Extract the fields of this document as JSON.");
    const block = answers(page).last().locator(".markdown pre code");
    expect(await block.textContent()).toBe('{\n  "vendor": "ACME",\n  "total": 12.5\n}\n');

    // Written again, it is still asked for as JSON; edited into other words, or a typed
    // follow-up, it is not.
    await page.getByRole("button", { name: "Regenerate the answer" }).click();
    await expect.poll(() => requests.length).toBe(2);
    await waitForAnswer(page);
    expect(requests[1].response_format).toEqual({ type: "json_object" });
    await (await editQuestion(page)).fill("List the fields.");
    const editor = page.getByRole("form", { name: "Edit the question" });
    await editor.getByRole("button", { name: "Send" }).click();
    await waitForAnswer(page, 60_000, "Vendor: ACME");
    expect(requests[2].response_format).toBeUndefined();
    expect(await answers(page).last().locator(".markdown").innerHTML()).toBe("<p>Vendor: ACME</p>\n");
    await setMaxTokens(page, 4);
    await ask(page, "Thanks.");
    await waitForAnswer(page);
    expect(requests[3].response_format).toBeUndefined();
  });
});

describe("the answer format in the settings", () => {
  it("asks for JSON following a pasted schema, which the server's answer parses as", async () => {
    const page = await openPage();
    const requests = recordChatRequests(page);
    await setMaxTokens(page, 48);
    await page.getByRole("button", { name: "Settings" }).click();
    await page.getByRole("radio", { name: "JSON with a schema" }).check();
    const box = page.getByLabel("JSON schema");
    await box.fill('{"type": "object",');
    const error = page.locator("#json-schema-error");
    expect(await error.innerText()).toMatch(/^This is not JSON: /);
    await page.getByRole("button", { name: "Close settings" }).click();
    await ask(page, "Which colour?");
    expect(await page.locator("#composer-note").innerText()).toMatch(/^Fix the JSON schema in the settings first\./);
    expect(requests).toHaveLength(0);

    const schema = {
      type: "object",
      properties: { colour: { enum: ["red", "blue"] } },
      required: ["colour"],
      additionalProperties: false,
    };
    await page.getByRole("button", { name: "Settings" }).click();
    await box.fill(JSON.stringify(schema));
    expect(await error.isHidden()).toBe(true);
    await page.getByRole("button", { name: "Close settings" }).click();
    await ask(page, "Which colour?");
    await waitForAnswer(page);
    expect(requests[0].response_format).toEqual({
      type: "json_schema",
      json_schema: { name: "answer", schema, strict: true },
    });
    const block = answers(page).last().locator(".markdown pre code.language-json");
    expect(JSON.parse((await block.textContent()) ?? "")).toMatchObject({
      colour: expect.stringMatching(/^(red|blue)$/),
    });
    expect(await answers(page).last().getByRole("button", { name: "Copy code" }).count()).toBe(1);

    await page.getByRole("button", { name: "Settings" }).click();
    await page.getByRole("radio", { name: "JSON", exact: true }).check();
    await page.getByRole("button", { name: "Close settings" }).click();
    await ask(page, "And now?");
    await waitForAnswer(page);
    expect(requests[1].response_format).toEqual({ type: "json_object" });
  });
});

describe("images", () => {
  it("opens an image large, closed with Escape or its button", async () => {
    const page = await openPage();
    await pickWithCamera(page, [PHOTO()]);
    const lightbox = page.getByRole("dialog", { name: "Image 1: photo.jpg" });
    await page.getByRole("button", { name: "Show image 1 large (photo.jpg)" }).click();
    await lightbox.waitFor();
    await page.keyboard.press("Escape");
    await lightbox.waitFor({ state: "hidden" });

    await cannedAnswers(page, ["A photo."]);
    await ask(page, "What is this?");
    await waitForAnswer(page);
    const thumbnail = page.locator("article.message.user img");
    await page.getByRole("button", { name: "Show image 1 large (photo.jpg)" }).click();
    await lightbox.waitFor();
    const large = page.locator("#lightbox-image");
    await expect.poll(() => large.evaluate((img: HTMLImageElement) => img.naturalWidth)).toBeGreaterThan(0);
    expect(await large.getAttribute("src")).toBe(await thumbnail.getAttribute("src"));
    // Shown at its own size (320 x 240) where the window has room, twice the thumbnail.
    expect((await large.boundingBox())!.height).toBe(240);
    expect((await thumbnail.boundingBox())!.height).toBe(120);
    await page.keyboard.press("Escape");
    await lightbox.waitFor({ state: "hidden" });

    await page.getByRole("button", { name: "Show image 1 large (photo.jpg)" }).click();
    await lightbox.waitFor();
    await page.getByRole("button", { name: "Close the image" }).click();
    await lightbox.waitFor({ state: "hidden" });
  });

  it("takes GIF and BMP files and names the formats when a file is no image", async () => {
    const page = await openPage();
    for (const input of ["#camera-input", "#gallery-input"]) {
      expect(await page.locator(input).getAttribute("accept")).toBe(`${ACCEPT_ATTRIBUTE},${VIDEO_ACCEPT_ATTRIBUTE}`);
    }
    const formats = "Use a JPEG, PNG, WebP, GIF or BMP file.";
    await pickWithCamera(page, [{ name: "notes.txt", mimeType: "text/plain", buffer: Buffer.from("hello") }]);
    await expect
      .poll(() => page.locator("#composer-note").innerText())
      .toBe(
        `"notes.txt" is not an image or a video. Use a JPEG, PNG, WebP, GIF or BMP file, or an ${VIDEO_FORMAT_NAMES} video.`,
      );
    await pickWithCamera(page, [{ name: "broken.png", mimeType: "image/png", buffer: Buffer.from("not a png") }]);
    await expect
      .poll(() => page.locator("#composer-note").innerText())
      .toBe(`"broken.png" is not an image this browser can read. ${formats}`);

    const requests = recordChatRequests(page);
    await pickWithCamera(page, [gifFile("chart.gif", 96, 64), bmpFile("scan.bmp", 80, 60)]);
    await expect.poll(() => page.locator(".attachment img").count()).toBe(2);
    await setMaxTokens(page, 4);
    await ask(page, "What are these?");
    await waitForAnswer(page);
    expect(await answers(page).last().locator(".answer-error").isHidden()).toBe(true);
    const content = requests[0].messages[0].content as { image_url?: { url: string } }[];
    expect(content.map((part) => part.image_url?.url.slice(0, 22))).toEqual([
      "data:image/gif;base64,",
      "data:image/bmp;base64,",
      undefined,
    ]);
  });
});

describe("suggestions", () => {
  it("show on a phone that they scroll, and wrap on a wide screen", async () => {
    const page = await openPage(PHONE, { touch: true });
    const row = page.locator("#quick-prompts");
    const more = page.locator("#quick-prompts-more");
    const metrics = () =>
      row.evaluate((node) => ({
        classes: [...node.classList].sort().join(" "),
        mask: getComputedStyle(node).maskImage,
        scrollLeft: node.scrollLeft,
        overflow: node.scrollWidth - node.clientWidth,
      }));
    const start = await metrics();
    expect(start.overflow).toBeGreaterThan(0);
    expect(start.classes).toBe("fade-end quick-prompts");
    expect(start.mask).toMatch(/linear-gradient/);
    expect(await more.isVisible()).toBe(true);
    const moreBox = (await more.boundingBox())!;
    expect(moreBox.x + moreBox.width).toBeLessThanOrEqual(PHONE.width);

    await more.click();
    await expect.poll(async () => (await metrics()).scrollLeft).toBeGreaterThan(50);
    await expect.poll(async () => (await metrics()).classes).toBe("fade-end fade-start quick-prompts");
    await row.evaluate((node) => node.scrollTo({ left: node.scrollWidth }));
    await expect.poll(async () => (await metrics()).classes).toBe("fade-start quick-prompts");
    expect(await more.isHidden()).toBe(true);

    await page.setViewportSize({ width: 1280, height: 800 });
    await expect.poll(async () => (await metrics()).overflow).toBeLessThanOrEqual(0);
    await expect.poll(async () => (await metrics()).classes).toBe("quick-prompts");
    expect((await metrics()).mask).toBe("none");
    expect(await more.isHidden()).toBe(true);
  });
});
