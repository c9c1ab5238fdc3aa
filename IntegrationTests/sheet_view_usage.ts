// What a prototype writes against sheet-view.d.ts: IntegrationTests/types-check compiles it with
// `tsc --strict` (0 errors), so the declarations are usable, not only well formed.
import type { SheetView, SnapDetail } from "../Sources/SheetService/Resources/sheet-view.js";

const sheet: SheetView | null = document.querySelector("sheet-view");
if (sheet) {
    sheet.addEventListener("snap", (e) => {
        const detail: SnapDetail = e.detail;
        console.log(detail.detent, detail.reason, detail.dismiss);
    });
    sheet.addEventListener("settle", (e) => console.log(e.detail.state, e.detail.detent));
    sheet.addEventListener("dismiss", () => console.log("dismissed"));
    void sheet.ready.then(() => sheet.show("half")).then((r) => console.log(r?.snap?.reason));
    void sheet.step(-1);
    void sheet.dismiss();
    console.log(sheet.stats?.mismatches, sheet.state, sheet.options, sheet.session?.id);
}
