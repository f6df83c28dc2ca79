import CSDL2
import Foundation
import FrameGraph

/// An SDL2 window with a renderer and one streaming texture: the thin owning wrapper over SDL's
/// pointers (everything here is freed in ``close()`` or deinit). All calls must come from the one
/// thread that made it (``DisplaySink`` runs it on a thread of its own).
final class SDLWindow {
    /// What the user did to the window.
    enum Event: Equatable {
        /// Closed the window, or pressed q or Escape.
        case close
        case none
    }

    private var window: OpaquePointer?
    private var renderer: OpaquePointer?
    private var texture: OpaquePointer?
    private var textureKey: (format: PixelFormat, width: Int, height: Int, color: ColorDescription)?
    private var videoStarted = false

    /// Opens a window of `width`×`height` (shrunk to fit the screen, aspect kept) titled `title`.
    /// Throws ``DisplayError`` with SDL's reason when there is no display or the window cannot open.
    init(title: String, width: Int, height: Int) throws {
        // FrameGraph handles Ctrl-C itself; SDL must not turn it into a window-close event.
        SDL_SetHint(SDL_HINT_NO_SIGNAL_HANDLERS, "1")
        SDL_SetHint(SDL_HINT_RENDER_SCALE_QUALITY, "linear")
        // A real window or an error: without this, SDL falls back to drivers that show nothing
        // (KMS/DRM on a console, offscreen) and the run would look fine with no picture anywhere.
        // SDL_VIDEODRIVER in the environment still wins (SDL reads it first).
        let env = ProcessInfo.processInfo.environment
        let x11 = env["DISPLAY"].flatMap { $0.isEmpty ? nil : $0 }, wayland = env["WAYLAND_DISPLAY"].flatMap { $0.isEmpty ? nil : $0 }
        SDL_SetHint(SDL_HINT_VIDEODRIVER, [x11.map { _ in "x11" }, wayland.map { _ in "wayland" }].compactMap { $0 }.joined(separator: ","))
        guard SDL_InitSubSystem(UInt32(SDL_INIT_VIDEO)) == 0 else {
            let on = [x11.map { "X display \($0)" }, wayland.map { "Wayland display \($0)" }].compactMap { $0 }.joined(separator: " or ")
            throw DisplayError.cannotOpen("\(on.isEmpty ? "no display" : on) cannot be used (SDL: \(Self.lastError()))")
        }
        videoStarted = true
        var w = Int32(clamping: width), h = Int32(clamping: height)
        var usable = SDL_Rect()
        if SDL_GetDisplayUsableBounds(0, &usable) == 0, usable.w > 0, usable.h > 0, w > usable.w || h > usable.h {
            let scale = min(Double(usable.w) / Double(w), Double(usable.h) / Double(h))
            w = max(1, Int32(Double(w) * scale))
            h = max(1, Int32(Double(h) * scale))
        }
        let centred = Int32(fg_sdl_windowpos_centered())
        guard let win = SDL_CreateWindow(title, centred, centred, w, h, UInt32(SDL_WINDOW_RESIZABLE.rawValue)) else {
            let reason = Self.lastError()
            close()
            throw DisplayError.cannotOpen(reason)
        }
        window = win
        // A GPU renderer when there is a GPU; SDL's software renderer otherwise. An OpenGL renderer
        // that Mesa runs on the CPU (llvmpipe, softpipe: Xvfb, a server without a GPU) costs several
        // times the software renderer's CPU, so it is replaced by that.
        renderer = SDL_CreateRenderer(win, -1, UInt32(SDL_RENDERER_ACCELERATED.rawValue))
        if let r = renderer, Self.rendersOnTheCPU(r) {
            SDL_DestroyRenderer(r)
            renderer = nil
        }
        if renderer == nil {
            // The software renderer's window surface must not itself go through OpenGL (SDL would
            // use that CPU-rasterised OpenGL again to present it: 2.2 against 0.3 ms of CPU per
            // 640×480 frame, measured on Xvfb).
            SDL_SetHint(SDL_HINT_FRAMEBUFFER_ACCELERATION, "0")
            renderer = SDL_CreateRenderer(win, -1, UInt32(SDL_RENDERER_SOFTWARE.rawValue))
        }
        rendererName = renderer.flatMap { r in
            var info = SDL_RendererInfo()
            return SDL_GetRendererInfo(r, &info) == 0 ? info.name.map { String(cString: $0) } : nil
        } ?? "?"
        guard renderer != nil else {
            let reason = Self.lastError()
            close()
            throw DisplayError.cannotOpen(reason)
        }
    }

    deinit { close() }

    /// SDL's name of the renderer in use ("software", "opengl" …).
    private(set) var rendererName = "?"

    /// Whether `renderer` is OpenGL rasterised in software by Mesa (its GL_RENDERER names llvmpipe,
    /// softpipe or swrast).
    private static func rendersOnTheCPU(_ renderer: OpaquePointer) -> Bool {
        var info = SDL_RendererInfo()
        guard SDL_GetRendererInfo(renderer, &info) == 0, let name = info.name.map({ String(cString: $0) }), name.hasPrefix("opengl"),
              let address = SDL_GL_GetProcAddress("glGetString") else { return false }
        typealias GetString = @convention(c) (UInt32) -> UnsafePointer<UInt8>?
        let glGetString = unsafeBitCast(address, to: GetString.self)
        guard let text = glGetString(0x1F01 /* GL_RENDERER */) else { return false }
        let description = String(cString: text).lowercased()
        return ["llvmpipe", "softpipe", "swrast"].contains { description.contains($0) }
    }

    /// Destroys the texture, renderer and window, and stops SDL's video subsystem.
    func close() {
        if let texture { SDL_DestroyTexture(texture) }
        if let renderer { SDL_DestroyRenderer(renderer) }
        if let window { SDL_DestroyWindow(window) }
        texture = nil
        renderer = nil
        window = nil
        neutral.deallocate()
        neutral = UnsafeMutableBufferPointer(start: nil, count: 0)
        if videoStarted { SDL_QuitSubSystem(UInt32(SDL_INIT_VIDEO)) }
        videoStarted = false
    }

    /// Shows `frame` scaled to fit the window with its aspect kept (black bars around it).
    func show(_ frame: Frame) throws {
        guard let renderer else { return }
        let texture = try textureFor(frame)
        let ok: Int32
        switch frame.format {
        case .yuv420p:
            ok = SDL_UpdateYUVTexture(texture, nil, plane(frame, 0), Int32(frame.planes[0].stride), plane(frame, 1), Int32(frame.planes[1].stride),
                                      plane(frame, 2), Int32(frame.planes[2].stride))
        case .nv12:
            ok = SDL_UpdateNVTexture(texture, nil, plane(frame, 0), Int32(frame.planes[0].stride), plane(frame, 1), Int32(frame.planes[1].stride))
        case .gray8:
            ok = SDL_UpdateYUVTexture(texture, nil, plane(frame, 0), Int32(frame.planes[0].stride), grayChroma(frame.width), 0, grayChroma(frame.width), 0)
        default:
            ok = SDL_UpdateTexture(texture, nil, UnsafeRawPointer(frame.base(plane: 0)), Int32(frame.planes[0].stride))
        }
        guard ok == 0 else { throw DisplayError.failed(Self.lastError()) }
        var outW: Int32 = 0, outH: Int32 = 0
        SDL_GetRendererOutputSize(renderer, &outW, &outH)
        let scale = min(Double(outW) / Double(frame.width), Double(outH) / Double(frame.height))
        let w = Int32(Double(frame.width) * scale), h = Int32(Double(frame.height) * scale)
        var target = SDL_Rect(x: (outW - w) / 2, y: (outH - h) / 2, w: w, h: h)
        SDL_SetRenderDrawColor(renderer, 0, 0, 0, 255)
        SDL_RenderClear(renderer)
        SDL_RenderCopy(renderer, texture, nil, &target)
        SDL_RenderPresent(renderer)
    }

    /// Handles every pending event; `.close` when the window was closed or q/Escape pressed.
    func pollEvents() -> Event {
        var event = SDL_Event()
        var result = Event.none
        while SDL_PollEvent(&event) != 0 {
            switch event.type {
            case SDL_QUIT.rawValue:
                result = .close
            case SDL_WINDOWEVENT.rawValue where event.window.event == UInt8(SDL_WINDOWEVENT_CLOSE.rawValue):
                result = .close
            case SDL_KEYDOWN.rawValue:
                let key = event.key.keysym.sym
                if key == Int32(SDLK_q.rawValue) || key == Int32(SDLK_ESCAPE.rawValue) { result = .close }
            default:
                break
            }
        }
        return result
    }

    private func plane(_ frame: Frame, _ p: Int) -> UnsafePointer<UInt8> {
        UnsafePointer(frame.base(plane: p).assumingMemoryBound(to: UInt8.self))
    }

    /// A row of neutral chroma (128) for showing gray8 frames through a Y'CbCr texture (owned; freed in close()).
    private var neutral = UnsafeMutableBufferPointer<UInt8>(start: nil, count: 0)
    private func grayChroma(_ width: Int) -> UnsafePointer<UInt8>? {
        let needed = (width + 1) / 2
        if neutral.count < needed {
            neutral.deallocate()
            neutral = .allocate(capacity: needed)
            neutral.initialize(repeating: 128)
        }
        return neutral.baseAddress.map { UnsafePointer($0) }
    }

    /// The streaming texture for frames like `frame` (made again when the format, size or colour changes).
    private func textureFor(_ frame: Frame) throws -> OpaquePointer {
        if let texture, let key = textureKey, key.format == frame.format, key.width == frame.width, key.height == frame.height,
           key.color == frame.color { return texture }
        if let texture { SDL_DestroyTexture(texture) }
        texture = nil
        let format: UInt32
        switch frame.format {
        case .rgb24: format = SDL_PIXELFORMAT_RGB24.rawValue
        case .rgba: format = SDL_PIXELFORMAT_ABGR8888.rawValue   // bytes R, G, B, A on little-endian machines
        case .bgra: format = SDL_PIXELFORMAT_ARGB8888.rawValue   // bytes B, G, R, A
        case .yuv420p, .gray8: format = SDL_PIXELFORMAT_IYUV.rawValue
        case .nv12: format = SDL_PIXELFORMAT_NV12.rawValue
        case .planarFloat32: throw DisplayError.failed("float frames cannot be shown (add a 'convert' node)")
        }
        let color = frame.color.resolved(height: frame.height)
        SDL_SetYUVConversionMode(color.range == .full ? SDL_YUV_CONVERSION_JPEG
                                 : color.matrix == ColorDescription.bt709Code ? SDL_YUV_CONVERSION_BT709 : SDL_YUV_CONVERSION_BT601)
        guard let made = SDL_CreateTexture(renderer, format, Int32(SDL_TEXTUREACCESS_STREAMING.rawValue), Int32(frame.width), Int32(frame.height)) else {
            throw DisplayError.failed(Self.lastError())
        }
        texture = made
        textureKey = (frame.format, frame.width, frame.height, frame.color)
        return made
    }

    private static func lastError() -> String {
        guard let text = SDL_GetError() else { return "unknown SDL error" }
        let s = String(cString: text)
        return s.isEmpty ? "unknown SDL error" : s
    }
}

/// The preview window could not be used.
public enum DisplayError: Error, Sendable, CustomStringConvertible, Equatable {
    /// No display to open a window on (no DISPLAY or WAYLAND_DISPLAY).
    case noDisplay
    /// SDL could not open the window (its reason).
    case cannotOpen(String)
    /// Showing a frame failed (SDL's reason).
    case failed(String)

    public var description: String {
        switch self {
        case .noDisplay: return "no display to open a window on (DISPLAY and WAYLAND_DISPLAY are unset): run it in a desktop session, or under Xvfb"
        case .cannotOpen(let reason): return "cannot open a window: \(reason)"
        case .failed(let reason): return "cannot show the frame: \(reason)"
        }
    }
}
