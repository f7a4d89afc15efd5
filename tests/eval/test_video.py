import imageio.v2 as imageio
import numpy as np

from rearrange.eval.video import VideoRecorder


def test_video_is_written_and_read_back_with_its_frame_count(tmp_path):
    rec = VideoRecorder(tmp_path / "v" / "ep.mp4", fps=10)
    for i in range(12):
        frame = np.zeros((48, 64, 3), np.uint8)
        frame[:, : 5 * i] = 255
        rec.add(frame)
    path = rec.close()
    assert path == tmp_path / "v" / "ep.mp4" and not list((tmp_path / "v").glob("*.partial*"))
    reader = imageio.get_reader(path)
    frames = [f for f in reader]
    reader.close()
    assert len(frames) == 12
    assert frames[0].shape == (48, 64, 3)
    # the white bar grows: last frame is brighter than the first
    assert frames[-1].mean() > frames[0].mean() + 100
