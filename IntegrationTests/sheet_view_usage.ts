// What a prototype writes against sheet-view.d.ts: IntegrationTests/types-check compiles it with
// `tsc --strict` (0 errors), so the declarations are usable, not only well formed.
import type { SheetView, SnapDetail, FrameDetail, ResultDetail } from "../Sources/SheetService/Resources/sheet-view.js";

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
    // A device frame drawn in a page: the sheet placed in its container, with a geometry of its own.
    sheet.contained = true;
    sheet.geometry = { height: 844, safeAreaTop: 47, safeAreaBottom: 34 };
    sheet.predicting = false;
    sheet.latency = 200;
    const pxPerPoint: number = sheet.scale;
    sheet.addEventListener("frame", (e) => {
        const f: FrameDetail = e.detail;
        console.log(f.constant * pxPerPoint, f.dimmerAlpha, f.progress, f.motion, f.time);
    });
    sheet.addEventListener("result", (e) => {
        const r: ResultDetail = e.detail;
        console.log(r.request, r.result.constant, "snap" in r.result ? r.result.snap?.reason : null);
    });
    sheet.addEventListener("problem", (e) => console.log(e.detail.code, e.detail.message));
}
